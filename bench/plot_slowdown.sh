#!/usr/bin/env bash
# plot_slowdown.sh: draws the slowdowns bench/real_programs.sh measured (its
# -d TSV: workload, then one column per tool, each a multiple of the
# untraced wall time) as a grouped bar chart on a log scale, in SVG, with
# gnuplot (Debian: gnuplot-nox).
#
# usage: bench/plot_slowdown.sh TSV OUT.svg [TITLE]
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,7s/^# \{0,1\}//p' "$0" >&2; exit 2; }
in=$1 out=$2 title=${3:-Slowdown against the untraced program (wall time, log scale)}
command -v gnuplot >/dev/null || { echo "plot_slowdown.sh: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }
[[ -s $in ]] || { echo "plot_slowdown.sh: $in: no data" >&2; exit 1; }
cols=$(head -1 "$in" | awk -F'\t' '{print NF}')
# "-" (not measured) becomes gnuplot's missing value.
clean=$(mktemp)
trap 'rm -f "$clean"' EXIT
sed 's/\t-\(\t\|$\)/\t?\1/g; s/\t-\(\t\|$\)/\t?\1/g' "$in" >"$clean"
gnuplot <<GP
set terminal svg size 820,380 dynamic font "sans,12" background "#ffffff"
set output "$out"
set datafile separator "\t"
set datafile missing "?"
set title "$title"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y 10
set yrange [0.8:*]
set ylabel "x untraced"
set grid ytics
set key outside right top vertical
set arrow from graph 0, first 2 to graph 1, first 2 nohead dashtype 2 lc rgb "#555555"
set label "2x" at graph 1.01, first 2 textcolor rgb "#555555"
plot for [c=2:$cols] "$clean" using c:xtic(1) title columnheader(c)
GP
echo "plot_slowdown.sh: wrote $out" >&2

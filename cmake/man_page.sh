#!/bin/sh
# Build-time: the man page of atrace (SUBCOMMAND empty) or of one of its
# subcommands (atrace-SUBCOMMAND.1), made by help2man from the same text as
# `atrace [SUBCOMMAND] --help`, so the two cannot drift apart.
#   man_page.sh ATRACE SUBCOMMAND VERSION OUT DOCDIR
set -eu
atrace=$1 sub=$2 version=$3 out=$4 docdir=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
name=atrace${sub:+-$sub}
# help2man runs a program: this one is `atrace SUBCOMMAND`, under the page's name.
printf '#!/bin/sh\nexec "%s" %s "$@"\n' "$atrace" "$sub" >"$dir/$name"
chmod +x "$dir/$name"
# The NAME line: the first line of the help (the command's description),
# without the "atrace: " atrace's own starts with.
what=$("$dir/$name" --help | head -n 1 | sed 's/^atrace: //')
# SEE ALSO: the other pages.
{
  echo "[SEE ALSO]"
  pages=""
  for other in "" record top report script convert info list; do
    [ "$other" = "$sub" ] || pages="$pages${pages:+, }atrace${other:+-$other}(1)"
  done
  echo "$pages"
} >"$dir/see-also"
help2man --include="$dir/see-also" --no-info --no-discard-stderr --section=1 --version-string="$version" \
  --name="$what" --output="$out" "$dir/$name"
# help2man joins the example lines into one paragraph: keep them lines.
# The help's docs/NAME.md are the checkout's; the page names them where
# `cmake --install` puts them.
sed -i -e '/^\.SH EXAMPLES/,/^\.PP/{s/^\.IP$/.nf/;s/^\.PP$/.fi\n.PP/}' \
  -e 's|docs/\([A-Za-z0-9_\-]*\.md\)|'"$docdir"'/\1|g' "$out"

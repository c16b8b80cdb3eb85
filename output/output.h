// output/: the public face of the renderings, for tools/ (the one header a
// file outside output/ includes; tests/check_layering.py).
//
//   report.h        ReportInput/ReportOptions; the text and JSON report
//   render_views.h  --tree, --callers, --callees, --diff
//   report_html.h   the self-contained HTML report
//   script_format.h `atrace script`: one line per event
//   script_stack.h  `atrace script`: the call stack after an entry
//   export.h        `atrace convert`: every exporter
//   export_graph.h  the exporters built from the call tree
//   export_tables.h `convert --to=tables`: typed tables as TSV
//   clickhouse_load.h `convert --to=clickhouse`: the tables into a server
//   table_native.h  a table's batch as ClickHouse's Native format
#pragma once

#include "output/clickhouse_load.h"
#include "output/export.h"
#include "output/export_graph.h"
#include "output/export_tables.h"
#include "output/render_views.h"
#include "output/report.h"
#include "output/report_html.h"
#include "output/script_format.h"
#include "output/script_stack.h"
#include "output/table_native.h"

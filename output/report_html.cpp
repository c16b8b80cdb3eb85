// The HTML report's document (report_html.h): a fixed skeleton, the style
// and scripts of output/html/ (turned into string literals at build time
// by cmake/embed_text.cmake, so they stay readable files of their own) and
// the data in a <script type="application/json"> element that the page's
// script parses. Everything the page shows comes from that data through
// textContent or a canvas: no trace string is ever parsed as HTML.
#include "output/report_html.h"

namespace atrace::analysis {

namespace {

// Each asset is a list of literal pieces (compilers cap one literal's size).
constexpr const char* kErrorsJs[] = {
#include "generated/html/errors.js.inc"
};
constexpr const char* kBaseJs[] = {
#include "generated/html/report_base.js.inc"
};
constexpr const char* kFlameJs[] = {
#include "generated/html/report_flame.js.inc"
};
constexpr const char* kFlowsJs[] = {
#include "generated/html/report_flows.js.inc"
};
constexpr const char* kTimelineJs[] = {
#include "generated/html/report_timeline.js.inc"
};
constexpr const char* kReportCss[] = {
#include "generated/html/report.css.inc"
};

template <size_t N>
void append_asset(std::string& out, const char* const (&pieces)[N]) {
  for (const char* p : pieces) out += p;
}

}  // namespace

std::string script_safe(std::string json) {
  std::string out;
  out.reserve(json.size() + json.size() / 64);
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

std::string html_page(const std::string& data) {
  std::string page;
  page.reserve(data.size() + 64 * 1024);
  page +=
      "<!DOCTYPE html>\n"
      "<html lang=\"en\" data-atrace-ready=\"0\">\n"
      "<head>\n"
      "<meta charset=\"utf-8\">\n"
      // The page may load nothing from anywhere: its own inline script and
      // style only, images only from data: URLs (canvas exports).
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>atrace report</title>\n"
      "<style>\n";
  append_asset(page, kReportCss);
  page +=
      "</style>\n"
      "<script>\n";
  // Installed before the main script, so that even its syntax errors show.
  append_asset(page, kErrorsJs);
  page +=
      "</script>\n"
      "</head>\n"
      "<body>\n"
      "<header id=\"head\"><h1>atrace report</h1><p id=\"facts\"></p>"
      "<p id=\"warnings\" class=\"warn\" hidden></p></header>\n"
      "<pre id=\"atrace-errors\" hidden></pre>\n"
      "<nav><a href=\"#flame\">Flame graph</a> <a href=\"#timeline\">Timeline</a> "
      "<a href=\"#functions\">Functions</a> <a href=\"#flows\">Flows</a></nav>\n"
      "<section id=\"flame\"><h2>Flame graph</h2>\n"
      "<p class=\"help\">Width is inclusive time. Click a frame to zoom into it, click the "
      "top bar (or Reset) to zoom out. <button id=\"fg-reset\" type=\"button\">Reset</button>"
      "</p>\n"
      "<p id=\"fg-note\" class=\"note\"></p>\n"
      "<div id=\"fg-status\" class=\"status\">&nbsp;</div>\n"
      "<div class=\"canvas-box\"><canvas id=\"fg-canvas\"></canvas></div></section>\n"
      "<section id=\"timeline\"><h2>Timeline</h2>\n"
      "<p class=\"help\">Drag to pan, wheel to zoom, double-click to see everything. "
      "<button id=\"tl-reset\" type=\"button\">Reset</button></p>\n"
      "<p id=\"tl-note\" class=\"note\"></p>\n"
      "<div id=\"tl-status\" class=\"status\">&nbsp;</div>\n"
      "<div class=\"canvas-box\"><canvas id=\"tl-canvas\"></canvas></div></section>\n"
      "<section id=\"functions\"><h2>Functions</h2>\n"
      "<p class=\"help\">Click a column header to sort by it; click again to reverse.</p>\n"
      "<p id=\"fn-note\" class=\"note\"></p>\n"
      "<div class=\"table-box\"><table id=\"fn-table\"><thead></thead><tbody></tbody></table>"
      "</div></section>\n"
      "<section id=\"flows\"><h2>Flows</h2>\n"
      "<p class=\"help\">Who hands values, bytes and wake-ups to whom (docs/flows.md): "
      "blue values, green bytes, dashed grey wake-ups; the cheapest split's groups left and "
      "right. Hover a function to see only its edges.</p>\n"
      "<p id=\"fl-note\" class=\"note\"></p>\n"
      "<div id=\"fl-status\" class=\"status\">&nbsp;</div>\n"
      "<div class=\"canvas-box\"><canvas id=\"fl-canvas\"></canvas></div>\n"
      "<div class=\"table-box\"><table id=\"fl-table\"><thead></thead><tbody></tbody></table>"
      "</div></section>\n"
      "<script type=\"application/json\" id=\"atrace-data\">";
  page += script_safe(data);
  page += "</script>\n";
  // One <script> each, in order: each sees the names of the ones before
  // (output/html/report_base.js says what each holds).
  page += "<script>\n";
  append_asset(page, kBaseJs);
  page += "</script>\n<script>\n";
  append_asset(page, kFlameJs);
  page += "</script>\n<script>\n";
  append_asset(page, kFlowsJs);
  page += "</script>\n<script>\n";
  append_asset(page, kTimelineJs);
  page +=
      "</script>\n"
      "</body>\n"
      "</html>\n";
  return page;
}

}  // namespace atrace::analysis

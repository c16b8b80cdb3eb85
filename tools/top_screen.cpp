#include "tools/top_screen.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>

namespace atrace::tools {

namespace {

constexpr const char* kEnter = "\x1b[?1049h\x1b[?25l";  // alternate screen, cursor hidden
constexpr const char* kLeave = "\x1b[?25h\x1b[?1049l";
// Above the table: the title and a blank line.
constexpr size_t kTitleRows = 2;

struct winsize window() {
  struct winsize ws {};
  if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) != 0 || ws.ws_row == 0 || ws.ws_col == 0) {
    ws.ws_row = 24;
    ws.ws_col = 80;
  }
  return ws;
}

void put(std::string_view text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

}  // namespace

void TopScreen::start() {
  if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved_) == 0) {
    struct termios raw = saved_;
    // Output processing stays on: a launched target's lines still end
    // where they should.
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;  // read() returns at once: quit() never waits
    raw.c_cc[VTIME] = 0;
    raw.c_cc[VSUSP] = _POSIX_VDISABLE;
    keys_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  put(kEnter);
  open_ = true;
}

void TopScreen::close() {
  if (!open_) return;
  open_ = false;
  put(kLeave);
  if (keys_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  keys_ = false;
}

size_t TopScreen::max_rows() {
  const size_t rows = window().ws_row;
  // The table's column names take one row.
  return rows > kTitleRows + 2 ? rows - kTitleRows - 1 : 1;
}

void TopScreen::show(const TopFrame& frame) {
  if (frame.last) {
    close();
    put("atrace top: " + frame.title + "\n" + frame.table);
    return;
  }
  const struct winsize ws = window();
  const size_t cols = ws.ws_col, rows = ws.ws_row;
  std::string screen = "\x1b[H";
  size_t row = 0;
  // Lines cut at the screen's width: a wrapped line would push the table
  // off the screen.
  auto line = [&](std::string_view text) {
    if (row >= rows) return;
    screen += std::string(text.substr(0, cols)) + "\x1b[K";
    if (++row < rows) screen += "\n";
  };
  line("atrace top: " + frame.title + (keys_ ? "  (q: quit)" : "  (Ctrl-C: quit)"));
  line("");
  std::string_view table = frame.table;
  if (table.empty()) line("no call ended yet");
  while (!table.empty()) {
    const size_t nl = table.find('\n');
    line(table.substr(0, nl));
    table.remove_prefix(nl == std::string_view::npos ? table.size() : nl + 1);
  }
  put(screen + "\x1b[J");
}

bool TopScreen::quit() {
  if (!keys_) return false;
  char keys[64];
  const ssize_t n = read(STDIN_FILENO, keys, sizeof keys);
  for (ssize_t i = 0; i < n; ++i)
    if (keys[i] == 'q' || keys[i] == 'Q') return true;
  return false;
}

}  // namespace atrace::tools

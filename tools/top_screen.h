// `atrace top` on a terminal: the live screen. From start() to close() (or
// its destruction, however top ends: q, a signal, the target's exit, an
// error) the terminal is in the alternate screen with the cursor hidden
// and, when stdin is a terminal, reads keys one at a time without echo;
// then it is as it was. Ctrl-C keeps its meaning (a stop signal: the
// recording ends as `record`'s does); Ctrl-Z is off while top runs, so the
// terminal is never left in this mode by a stopped atrace.
#pragma once

#include <termios.h>

#include "tools/top_sink.h"

namespace atrace::tools {

class TopScreen : public TopView {
 public:
  TopScreen() = default;
  ~TopScreen() override { close(); }
  TopScreen(const TopScreen&) = delete;
  TopScreen& operator=(const TopScreen&) = delete;

  void start() override;
  size_t max_rows() override;
  // Redraws the screen; the last frame is printed on the normal screen,
  // after close(), where it stays.
  void show(const TopFrame& frame) override;
  // q (or Q) was pressed.
  bool quit() override;

 private:
  void close();

  bool open_ = false;
  bool keys_ = false;  // stdin is the terminal, in non-canonical mode
  struct termios saved_ {};
};

}  // namespace atrace::tools

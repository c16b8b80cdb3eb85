#include "tools/series_load.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

#include "base/diagnostics.h"
#include "base/plural.h"
#include "formats/trace_reader.h"
#include "output/output.h"

namespace atrace::tools {

SeriesFiles::SeriesFiles(std::string url, std::optional<uint64_t> keep, bool verbose)
    : url_(std::move(url)), keep_(keep), verbose_(verbose), thread_([this] { serve(); }) {}

SeriesFiles::~SeriesFiles() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void SeriesFiles::done(const std::string& path) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(path);
  }
  work_.notify_one();
}

bool SeriesFiles::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  if (thread_.joinable()) thread_.join();
  if (!url_.empty() && loaded_)
    base::progress(
        "%s loaded into %s: %s%s", base::plural(loaded_, "file").c_str(), url_.c_str(),
        base::plural(calls_, "call").c_str(),
        deleted_ ? (", " + base::plural(deleted_, "file") + " deleted once loaded").c_str() : "");
  else if (deleted_)
    base::progress("%s of the series deleted (--rotate-keep)",
                   base::plural(deleted_, "older file").c_str());
  return failed_ == 0;
}

void SeriesFiles::serve() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::string path = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    handle(path);
    lock.lock();
  }
}

// Loads the file (when asked), then deletes what --rotate-keep leaves out.
void SeriesFiles::handle(const std::string& path) {
  bool loaded = url_.empty();
  if (!url_.empty()) {
    try {
      // This file alone: the next one is being written.
      formats::TraceReader reader(path, formats::TraceReader::Series::Alone);
      const analysis::LoadResult r = analysis::load_clickhouse(reader, url_, "");
      loaded = true;
      ++loaded_;
      calls_ += r.counts.of("calls");
      if (verbose_)
        base::note("%s loaded into %s: %s", path.c_str(), url_.c_str(),
                   base::plural(r.counts.of("calls"), "call").c_str());
    } catch (const std::exception& e) {  // LoadError, TraceError: one line
      ++failed_;
      base::warning("%s not loaded (kept): %s", path.c_str(), e.what());
    }
  }
  if (!loaded || !keep_) return;
  kept_.push_back(path);
  while (kept_.size() > *keep_) {
    const std::string& old = kept_.front();
    if (::unlink(old.c_str()) == 0) ++deleted_;
    else base::warning("%s: cannot delete: %s", old.c_str(), base::errno_text(errno).c_str());
    kept_.pop_front();
  }
}

}  // namespace atrace::tools

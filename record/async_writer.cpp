#include "record/async_writer.h"

#include <utility>

namespace atrace {

AsyncEventWriter::AsyncEventWriter(formats::TraceWriter& w, size_t max_queued_events)
    : w_(w), max_queued_(max_queued_events), thread_([this] { serve(); }) {}

AsyncEventWriter::~AsyncEventWriter() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  work_.notify_one();
  thread_.join();
}

void AsyncEventWriter::rethrow_error() {
  if (error_) std::rethrow_exception(error_);
}

void AsyncEventWriter::push(Job&& job) {
  queued_events_ += job.events.size();
  queue_.push_back(std::move(job));
  work_.notify_one();
}

void AsyncEventWriter::run(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mu_);
  rethrow_error();
  push({{}, std::move(job)});
}

void AsyncEventWriter::write_events(std::vector<formats::Event>&& events) {
  std::unique_lock<std::mutex> lock(mu_);
  rethrow_error();
  // A batch larger than the bound still goes in once the queue is empty.
  room_.wait(lock, [&] {
    return error_ || queued_events_ == 0 || queued_events_ + events.size() <= max_queued_;
  });
  rethrow_error();
  push({std::move(events), {}});
}

void AsyncEventWriter::flush() {
  std::unique_lock<std::mutex> lock(mu_);
  room_.wait(lock, [&] { return error_ || (queue_.empty() && !writing_); });
  rethrow_error();
}

void AsyncEventWriter::serve() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    Job job = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    lock.unlock();
    std::exception_ptr failed;
    try {
      if (job.fn) job.fn();
      else w_.write_events(job.events);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    writing_ = false;
    queued_events_ -= job.events.size();
    if (failed && !error_) error_ = failed;
    if (error_) {  // the file is gone: what is queued will not be written
      queue_.clear();
      queued_events_ = 0;
    }
    room_.notify_all();
  }
}

}  // namespace atrace

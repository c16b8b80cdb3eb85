#include "record/thread_table.h"

#include <algorithm>
#include <cstring>
#include <fstream>

namespace atrace {

namespace {

std::string read_comm(uint32_t pid, uint32_t tid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}

}  // namespace

formats::ThreadInfo& ThreadTable::get(const formats::Event& ev, bool& fresh) {
  auto [it, added] = threads_.try_emplace(ev.tid);
  fresh = added;
  auto& t = it->second;
  if (fresh) {
    t.tid = ev.tid;
    t.pid = ev.pid;
    t.first_ts = ev.ts;
    t.name = read_comm(ev.pid, ev.tid);
  }
  t.first_ts = std::min(t.first_ts, ev.ts);  // rings deliver out of time order
  t.last_ts = std::max(t.last_ts, ev.ts);
  ++t.events;
  return t;
}

bool ThreadTable::saw(const formats::Event& ev) {
  bool fresh = false;
  get(ev, fresh);
  return fresh;
}

bool ThreadTable::named(const formats::Event& ev, const std::string& name) {
  bool fresh_thread = false;
  formats::ThreadInfo& t = get(ev, fresh_thread);
  if (name.empty()) return fresh_thread;
  auto [it, fresh] = named_at_.try_emplace(ev.tid, ev.ts);
  if (!fresh && ev.ts < it->second) return fresh_thread;  // an older name, drained late
  it->second = ev.ts;
  t.name = name;
  return fresh_thread;
}

void ThreadTable::refresh_names() {
  for (auto& [tid, t] : threads_) {
    std::string n = read_comm(t.pid, tid);
    if (!n.empty()) t.name = n;
  }
}

std::vector<formats::ThreadInfo> ThreadTable::table() const {
  std::vector<formats::ThreadInfo> v;
  for (const auto& [tid, t] : threads_) v.push_back(t);
  return v;
}

}  // namespace atrace

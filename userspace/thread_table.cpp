#include "userspace/thread_table.h"

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

fmt::ThreadInfo& ThreadTable::get(const fmt::Event& ev) {
  auto [it, fresh] = threads_.try_emplace(ev.tid);
  auto& t = it->second;
  if (fresh) {
    t.tid = ev.tid;
    t.pid = ev.pid;
    t.first_ts = ev.ts;
    t.name = read_comm(ev.pid, ev.tid);
  }
  t.last_ts = std::max(t.last_ts, ev.ts);
  ++t.events;
  return t;
}

void ThreadTable::saw(const fmt::Event& ev) { get(ev); }

void ThreadTable::named(const fmt::Event& ev, const std::string& name) {
  if (!name.empty()) get(ev).name = name;
  else get(ev);
}

void ThreadTable::refresh_names() {
  for (auto& [tid, t] : threads_) {
    std::string n = read_comm(t.pid, tid);
    if (!n.empty()) t.name = n;
  }
}

std::vector<fmt::ThreadInfo> ThreadTable::table() const {
  std::vector<fmt::ThreadInfo> v;
  for (const auto& [tid, t] : threads_) v.push_back(t);
  return v;
}

}  // namespace atrace

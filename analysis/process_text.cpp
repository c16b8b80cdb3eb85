#include "analysis/process_text.h"

namespace atrace::analysis {

namespace {

bool own_cgroup(const formats::ProcessInfo& p) { return !p.cgroup.empty() && p.cgroup != "/"; }

}  // namespace

bool worth_showing(const formats::ProcessInfo& p) {
  return p.own_pid_ns() || own_cgroup(p) || !p.name.empty();
}

std::string container_label(const formats::ProcessInfo& p) {
  if (p.name.empty()) return "";
  // A systemd unit has its type as suffix ("nginx.service"); a container
  // engine's id is hex digits alone (record/process_info.h).
  return (p.name.find('.') != std::string::npos ? "service " : "container ") + p.name;
}

std::string process_description(const formats::ProcessInfo& p) {
  std::string s = "pid " + std::to_string(p.pid);
  if (p.own_pid_ns()) s += " (" + std::to_string(p.ns_pid) + " in its namespace)";
  if (own_cgroup(p)) s += ", cgroup " + p.cgroup;
  if (!p.name.empty()) s += ", " + container_label(p);
  return s;
}

std::string process_tag(const formats::ProcessInfo& p) {
  std::string s;
  if (!p.name.empty()) s += " [" + container_label(p) + "]";
  if (p.own_pid_ns()) s += " pid " + std::to_string(p.ns_pid);
  return s;
}

std::vector<std::string> host_labels(const std::vector<formats::HostClocks>& hosts) {
  std::vector<std::string> out;
  if (hosts.size() < 2) return out;
  for (size_t i = 0; i < hosts.size(); i++) {
    const std::string& name = hosts[i].host_name;
    size_t same = 0;
    for (const auto& h : hosts) same += h.host_name == name;
    if (name.empty()) out.push_back("host" + std::to_string(i));
    else if (same > 1) out.push_back(name + "#" + std::to_string(i));
    else out.push_back(name);
  }
  return out;
}

}  // namespace atrace::analysis

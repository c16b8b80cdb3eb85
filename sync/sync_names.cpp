#include "sync/sync_types.h"

namespace atrace::sync {

// The words `atrace info` and its JSON print (issue 32's sync report).
const char* method_name(Method m) {
  switch (m) {
    case Method::kMessages: return "messages";
    case Method::kRealtime: return "realtime";
    case Method::kSameBoot: return "same-boot";
    case Method::kNone: return "none";
  }
  return "none";
}

const char* quality_name(Quality q) {
  switch (q) {
    case Quality::kAccurate: return "ACCURATE";
    case Quality::kApproximate: return "APPROXIMATE";
    case Quality::kFail: return "FAIL";
  }
  return "FAIL";
}

}  // namespace atrace::sync

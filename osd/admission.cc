#include "osd/admission.h"

#include <thread>

namespace orthofs {
namespace {

thread_local std::chrono::steady_clock::time_point request_admitted;

}  // namespace

Admission::RequestScope::RequestScope(Admission* admission, const MapHolder& maps)
    : admission_(admission), view_(maps.Current()) {
  request_admitted = std::chrono::steady_clock::now();
  ++admission_->in_flight_;
  admitted_ = !admission_->draining_.load();
}

Admission::RequestScope::~RequestScope() { --admission_->in_flight_; }

std::chrono::steady_clock::time_point Admission::AdmittedAt() { return request_admitted; }

bool Admission::WaitIdle(std::chrono::steady_clock::time_point deadline) const {
  while (in_flight_.load() > 0) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace orthofs

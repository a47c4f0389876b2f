// Starts n asynchronous calls at once and waits for all of them: one round trip for the lot
// instead of one per call (a listing that asks every OSD, df). Pure: the caller's `start`
// issues each call and hands its answer to the `done` it was given, on any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <latch>
#include <optional>
#include <utility>
#include <vector>

namespace orthofs {

// Calls start(i, done) for every i in [0, n), then waits until each `done` has been called
// once. Returns the answers in the order of i. An exception out of `start` ends the process:
// calls started before it would otherwise answer into this function's freed frame.
template <typename Answer, typename Start>
std::vector<Answer> AwaitAll(size_t n, Start&& start) {
  std::vector<std::optional<Answer>> answers(n);
  std::latch answered(static_cast<std::ptrdiff_t>(n));
  [&]() noexcept {
    for (size_t i = 0; i < n; ++i) {
      start(i, std::function<void(Answer)>([&answers, &answered, i](Answer answer) {
              answers[i].emplace(std::move(answer));
              answered.count_down();
            }));
    }
  }();
  answered.wait();
  std::vector<Answer> out;
  out.reserve(n);
  for (std::optional<Answer>& answer : answers) out.push_back(std::move(*answer));
  return out;
}

}  // namespace orthofs

// Clang's thread-safety annotations (-Wthread-safety), after Abseil's and LevelDB's
// port/thread_annotations.h: which mutex guards a member, which a function needs held.
// Other compilers see nothing. `Mutex` and `MutexLock` are std::mutex and std::lock_guard
// with the capability attributes the analysis needs (libstdc++'s carry none); wait on a Mutex
// with std::condition_variable_any.
#pragma once

#include <mutex>

#if defined(__clang__)
#define ORTHOFS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define ORTHOFS_THREAD_ANNOTATION(x)
#endif

#define ORTHOFS_CAPABILITY(x) ORTHOFS_THREAD_ANNOTATION(capability(x))
#define ORTHOFS_SCOPED_CAPABILITY ORTHOFS_THREAD_ANNOTATION(scoped_lockable)
#define ORTHOFS_GUARDED_BY(x) ORTHOFS_THREAD_ANNOTATION(guarded_by(x))
#define ORTHOFS_PT_GUARDED_BY(x) ORTHOFS_THREAD_ANNOTATION(pt_guarded_by(x))
#define ORTHOFS_REQUIRES(...) ORTHOFS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ORTHOFS_EXCLUDES(...) ORTHOFS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ORTHOFS_ACQUIRE(...) ORTHOFS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ORTHOFS_RELEASE(...) ORTHOFS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define ORTHOFS_TRY_ACQUIRE(...) ORTHOFS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define ORTHOFS_NO_THREAD_SAFETY_ANALYSIS ORTHOFS_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace orthofs {

class ORTHOFS_CAPABILITY("mutex") Mutex {
 public:
  void lock() ORTHOFS_ACQUIRE() { mu_.lock(); }
  void unlock() ORTHOFS_RELEASE() { mu_.unlock(); }
  bool try_lock() ORTHOFS_TRY_ACQUIRE(true) { return mu_.try_lock(); }

 private:
  std::mutex mu_;
};

class ORTHOFS_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ORTHOFS_ACQUIRE(mu) : mu_(mu) { mu_->lock(); }
  ~MutexLock() ORTHOFS_RELEASE() { mu_->unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* mu_;
};

}  // namespace orthofs

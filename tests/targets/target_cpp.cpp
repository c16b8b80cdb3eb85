// target_cpp: a C++ program with a namespace, a class, a function template
// and a call made before main.
//
//   target_cpp [K [A [B]]] [--exit=CODE] [--tag=X]   (defaults 10 20 30)
//
//   ns::Widget::poke(int)         K   member function
//   ns::add<int>(int, int)        A   template, one instantiation ...
//   ns::add<double>(double, double)  B   ... and another
//   ns::early_init()              1   called from a global constructor, before main
//
// Launch mode must record ns::early_init: it runs during the dynamic
// initialisation of this executable, before main's first line.
// Prints "pid=P", then "name=count" lines counted by the program itself, with
// "early_init_before_main=1" when the ordering held.
#include <unistd.h>

#include <cstdio>

#include "target_common.h"

namespace {
volatile long sink;
long poke_calls, add_int_calls, add_double_calls, early_init_calls;
bool main_started;
bool early_init_before_main;
}  // namespace

namespace ns {

class Widget {
 public:
  TRACED void poke(int amount);
  long value() const { return value_; }

 private:
  long value_ = 0;
};

void Widget::poke(int amount) {
  ++poke_calls;
  value_ += amount;
  sink = value_;
}

template <typename T>
TRACED T add(T a, T b) {
  if constexpr (sizeof(T) == sizeof(int)) ++add_int_calls;
  else ++add_double_calls;
  sink = static_cast<long>(a);
  return a + b;
}
// Explicit instantiations: both exist as symbols whatever main does with them.
template int add<int>(int, int);
template double add<double>(double, double);

TRACED void early_init() {
  ++early_init_calls;
  early_init_before_main = !main_started;
}

}  // namespace ns

namespace {
// A static object's constructor: runs before main, calls ns::early_init.
// Kept outside ns so a selector "ns::*" matches only the functions above.
struct EarlyInit {
  EarlyInit() { ns::early_init(); }
} early_init_object;
}  // namespace

int main(int argc, char** argv) {
  main_started = true;
  target_line_buffered();
  long k = target_count_arg(argc, argv, 0, 10);
  long a = target_count_arg(argc, argv, 1, 20);
  long b = target_count_arg(argc, argv, 2, 30);
  std::printf("pid=%d\n", static_cast<int>(getpid()));

  ns::Widget w;
  for (long i = 0; i < k; ++i) {
    w.poke(static_cast<int>(i));
    TARGET_BARRIER();
  }
  int isum = 0;
  for (long i = 0; i < a; ++i) {
    isum = ns::add<int>(isum, 1);
    TARGET_BARRIER();
  }
  double dsum = 0;
  for (long i = 0; i < b; ++i) {
    dsum = ns::add<double>(dsum, 0.5);
    TARGET_BARRIER();
  }
  std::printf("ns::Widget::poke=%ld\nns::add<int>=%ld\nns::add<double>=%ld\n", poke_calls,
              add_int_calls, add_double_calls);
  std::printf("ns::early_init=%ld\nearly_init_before_main=%d\n", early_init_calls,
              early_init_before_main ? 1 : 0);
  std::printf("checks=%ld,%d,%g\n", w.value(), isum, dsum);
  return target_exit_code(argc, argv);
}

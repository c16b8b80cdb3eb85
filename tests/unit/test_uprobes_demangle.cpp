// Demangling (C++, Rust legacy and v0) and the forms of demangled names:
// what selectors match against and what reports show. The Rust symbols are
// real ones, from a program built by Debian's rustc 1.63 (legacy mangling,
// and -C symbol-mangling-version=v0); tests/integration builds and traces
// one too when rustc is installed.
#include <gtest/gtest.h>

#include "base/symbol_name.h"
#include "uprobes/demangle.h"

using atrace::base::distinguishing_names;
using atrace::base::short_name;
using atrace::base::without_return_type;
using atrace::uprobes::base_name;
using atrace::uprobes::demangle;

TEST(UprobesDemangle, Itanium) {
  EXPECT_EQ(demangle("_ZN2ns3addIiEET_S1_S1_"), "int ns::add<int>(int, int)");
  EXPECT_EQ(demangle("_ZNK2ns5Class6methodEi"), "ns::Class::method(int) const");
  EXPECT_EQ(demangle("_Z3foov.cold"), "foo() [clone .cold]");
}

// GCC's per-file static constructors, as c++filt says the older form.
TEST(UprobesDemangle, StaticConstructorsAreSaidAsSuch) {
  EXPECT_EQ(demangle("_GLOBAL__sub_I_main.cpp"), "global constructors keyed to main.cpp");
  EXPECT_EQ(demangle("_GLOBAL__sub_I__ZN4demo3fooEv"), "global constructors keyed to demo::foo()");
  EXPECT_EQ(demangle("_GLOBAL__sub_D_x.cc"), "global destructors keyed to x.cc");
  EXPECT_EQ(demangle("_GLOBAL__I_a"), "global constructors keyed to a");
  EXPECT_EQ(atrace::base::short_name(demangle("_GLOBAL__sub_I_main.cpp")),
            "global constructors keyed to main.cpp");
  // Not the pattern: left alone.
  EXPECT_EQ(demangle("_GLOBAL__other"), "_GLOBAL__other");
  EXPECT_EQ(demangle("_GLOBAL_OFFSET_TABLE_"), "_GLOBAL_OFFSET_TABLE_");
}

TEST(UprobesDemangle, RustLegacyDropsTheHash) {
  EXPECT_EQ(demangle("_ZN2r24shop6Widget7compute17h1ba0240c182180b1E"),
            "r2::shop::Widget::compute");
  EXPECT_EQ(demangle("_ZN2r24main28_$u7b$$u7b$closure$u7d$$u7d$17he86dd6d5ffffafc3E"),
            "r2::main::{{closure}}");
  EXPECT_EQ(demangle("_ZN44_$LT$r2..P$u20$as$u20$core..fmt..Display$GT$3fmt17h161b62d9311d37a9E"),
            "<r2::P as core::fmt::Display>::fmt");
  // LLVM's ".llvm.N" suffix goes with the hash.
  EXPECT_EQ(
      demangle("_ZN3std10sys_common17thread_local_dtor22register_dtor_fallback5DTORS17h67b8f53"
               "abd1cfd26E.llvm.17816442430111643393"),
      "std::sys_common::thread_local_dtor::register_dtor_fallback::DTORS");
  EXPECT_EQ(
      demangle("_ZN4core3ptr119drop_in_place$LT$addr2line..lazy..LazyCell$LT$core..result.."
               "Result$LT$addr2line..Lines$C$gimli..read..Error$GT$$GT$$GT$17h05a67384bc2685b4"
               "E"),
      "core::ptr::drop_in_place<addr2line::lazy::LazyCell<core::result::Result<addr2line::"
      "Lines,gimli::read::Error>>>");
}

TEST(UprobesDemangle, RustV0) {
  EXPECT_EQ(demangle("_RNvCs35vA2Gx1xbd_2r24main"), "r2::main");
  EXPECT_EQ(demangle("_RNvMNtCs35vA2Gx1xbd_2r24shopNtB2_6Widget7compute"),
            "<r2::shop::Widget>::compute");
  EXPECT_EQ(demangle("_RINvNtCs35vA2Gx1xbd_2r24shop7generichEB4_"), "r2::shop::generic::<u8>");
  EXPECT_EQ(demangle("_RNCNvCs35vA2Gx1xbd_2r24main0B3_"), "r2::main::{closure#0}");
  EXPECT_EQ(demangle("_RNvXCs35vA2Gx1xbd_2r2NtB2_1PNtNtCs6IL9ONYDOZW_4core3fmt7Display3fmt"),
            "<r2::P as core::fmt::Display>::fmt");
  EXPECT_EQ(demangle("_RNvNtCsgEmfK2I1SDS_4core3fmt17pointer_fmt_inner"),
            "core::fmt::pointer_fmt_inner");
}

TEST(UprobesDemangle, NonMangledUnchanged) {
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("malloc"), "malloc");
  EXPECT_EQ(demangle("foo__bar"), "foo__bar");  // not read as Ada's "foo.bar"
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
  EXPECT_EQ(demangle("_Rgarbage"), "_Rgarbage");
  EXPECT_EQ(demangle("_R"), "_R");
  EXPECT_EQ(demangle(""), "");
}

TEST(UprobesDemangle, BaseNameStripsParametersAndQualifiers) {
  EXPECT_EQ(base_name("main"), "main");
  EXPECT_EQ(base_name("ns::f(int)"), "ns::f");
  EXPECT_EQ(base_name("ns::f()"), "ns::f");
  EXPECT_EQ(base_name("ns::Class::method(int) const"), "ns::Class::method");
  EXPECT_EQ(base_name("ns::Class::method() const &"), "ns::Class::method");
  EXPECT_EQ(base_name("ns::Class::method() &&"), "ns::Class::method");
  EXPECT_EQ(base_name("ns::Class::method() volatile noexcept"), "ns::Class::method");
  EXPECT_EQ(base_name("foo() [clone .cold]"), "foo");
  EXPECT_EQ(base_name("foo(int) [clone .isra.0] [clone .cold]"), "foo");
  EXPECT_EQ(base_name("f(void (*)(int), char)"), "f");
}

TEST(UprobesDemangle, BaseNameDropsTemplateReturnType) {
  EXPECT_EQ(base_name("int ns::add<int>(int, int)"), "ns::add<int>");
  EXPECT_EQ(base_name("int ns::add<int>(int, int) const"), "ns::add<int>");
  EXPECT_EQ(base_name("std::vector<int, std::allocator<int> > ns::make<int>(unsigned long)"),
            "ns::make<int>");
  EXPECT_EQ(base_name("unsigned long const& ns::get<unsigned long>(std::pair<int, int>)"),
            "ns::get<unsigned long>");
  EXPECT_EQ(base_name("std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> "
                      "> >::at(int const&)"),
            "std::map<int, int, std::less<int>, std::allocator<std::pair<int const, int> > >::at");
}

TEST(UprobesDemangle, BaseNameOperators) {
  EXPECT_EQ(base_name("Foo::operator()(int)"), "Foo::operator()");
  EXPECT_EQ(base_name("Foo::operator()() const"), "Foo::operator()");
  EXPECT_EQ(base_name("operator<(Foo const&, Foo const&)"), "operator<");
  EXPECT_EQ(base_name("bool ns::operator< <int>(ns::X<int> const&, ns::X<int> const&)"),
            "ns::operator< <int>");
  EXPECT_EQ(base_name("ns::X::operator<<(int)"), "ns::X::operator<<");
  EXPECT_EQ(base_name("ns::X::operator>>=(int)"), "ns::X::operator>>=");
  EXPECT_EQ(base_name("ns::X::operator->() const"), "ns::X::operator->");
  EXPECT_EQ(base_name("ns::X::operator[](unsigned long)"), "ns::X::operator[]");
  EXPECT_EQ(base_name("operator new(unsigned long)"), "operator new");
  EXPECT_EQ(base_name("operator delete[](void*)"), "operator delete[]");
  EXPECT_EQ(base_name("ns::X::operator bool() const"), "ns::X::operator bool");
  EXPECT_EQ(base_name("ns::X::operator char const*() const"), "ns::X::operator char const*");
}

TEST(UprobesDemangle, BaseNameAnonymousNamespacesAndLambdas) {
  EXPECT_EQ(base_name("(anonymous namespace)::f()"), "(anonymous namespace)::f");
  EXPECT_EQ(base_name("(anonymous namespace)::helper(int, int)"), "(anonymous namespace)::helper");
  EXPECT_EQ(base_name("main::{lambda(int)#1}::operator()(int) const"),
            "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(base_name("ns::f()::{lambda()#2}::operator()() const"),
            "ns::f()::{lambda()#2}::operator()");
}

TEST(UprobesDemangle, BaseNameKeepsAbiTagsAndThunkPrefixes) {
  EXPECT_EQ(base_name("ns::name[abi:cxx11](int)"), "ns::name[abi:cxx11]");
  EXPECT_EQ(base_name("non-virtual thunk to ns::D::f()"), "non-virtual thunk to ns::D::f");
}

TEST(UprobesDemangle, RoundTripThroughDemangler) {
  // Names produced by the real demangler, not written by hand.
  EXPECT_EQ(base_name(demangle("_ZN2ns3addIiEET_S1_S1_")), "ns::add<int>");
  EXPECT_EQ(base_name(demangle("_ZNK2ns5Class6methodEi")), "ns::Class::method");
  EXPECT_EQ(base_name(demangle("_ZN12_GLOBAL__N_11fEv")), "(anonymous namespace)::f");
  EXPECT_EQ(base_name(demangle("_ZZ4mainENKUliE_clEi")), "main::{lambda(int)#1}::operator()");
  EXPECT_EQ(base_name(demangle("_ZltRK3FooS1_")), "operator<");
}

// Short names, on what the demangler gives for real symbols.
TEST(SymbolShortName, CxxTemplatesAndParametersDropped) {
  EXPECT_EQ(short_name(demangle("_ZN2ns3addIiEET_S1_S1_")), "ns::add");
  EXPECT_EQ(short_name(demangle("_ZNK2ns5Class6methodEi")), "ns::Class::method");
  // std::vector<int>::push_back(int const&)
  EXPECT_EQ(short_name(demangle("_ZNSt6vectorIiSaIiEE9push_backERKi")), "std::vector::push_back");
  // std::map<int, int>::at(int const&)
  EXPECT_EQ(short_name(demangle("_ZNSt3mapIiiSt4lessIiESaISt4pairIKiiEEE2atERS3_")),
            "std::map::at");
  EXPECT_EQ(short_name("main"), "main");
  EXPECT_EQ(short_name("foo() [clone .cold]"), "foo");
  // A function pointer among the parameters.
  EXPECT_EQ(short_name(demangle("_Z1fPFviEc")), "f");
  EXPECT_EQ(demangle("_Z1fPFviEc"), "f(void (*)(int), char)");
}

TEST(SymbolShortName, Operators) {
  EXPECT_EQ(short_name(demangle("_ZltRK3FooS1_")), "operator<");
  EXPECT_EQ(short_name("bool ns::operator< <int>(ns::X<int> const&, ns::X<int> const&)"),
            "ns::operator<");
  EXPECT_EQ(short_name("Foo::operator()(int) const"), "Foo::operator()");
  // std::ostream& operator<<(std::ostream&, Foo const&)
  EXPECT_EQ(demangle("_ZlsRSoRK3Foo"), "operator<<(std::ostream&, Foo const&)");
  EXPECT_EQ(short_name(demangle("_ZlsRSoRK3Foo")), "operator<<");
  EXPECT_EQ(short_name("ns::X<int>::operator>>=(int)"), "ns::X::operator>>=");
  EXPECT_EQ(short_name("ns::X::operator char const*() const"), "ns::X::operator char const*");
}

TEST(SymbolShortName, LambdasAnonymousNamespacesAbiTagsThunks) {
  EXPECT_EQ(short_name(demangle("_ZZ4mainENKUliE_clEi")), "main::{lambda(int)#1}::operator()");
  // ns::f(int)::{lambda()#1}::operator()() const: the enclosing function's
  // parameters go.
  EXPECT_EQ(short_name(demangle("_ZZN2ns1fEiENKUlvE_clEv")), "ns::f::{lambda()#1}::operator()");
  EXPECT_EQ(short_name(demangle("_ZN12_GLOBAL__N_11fEv")), "(anonymous namespace)::f");
  // ns::name[abi:cxx11](int)
  EXPECT_EQ(demangle("_ZN2ns4nameB5cxx11Ei"), "ns::name[abi:cxx11](int)");
  EXPECT_EQ(short_name(demangle("_ZN2ns4nameB5cxx11Ei")), "ns::name");
  EXPECT_EQ(short_name("non-virtual thunk to ns::D<int>::f(int)"), "non-virtual thunk to ns::D::f");
}

TEST(SymbolShortName, Rust) {
  EXPECT_EQ(short_name(demangle("_ZN2r24shop6Widget7compute17h1ba0240c182180b1E")),
            "r2::shop::Widget::compute");
  EXPECT_EQ(short_name(demangle("_RNvMNtCs35vA2Gx1xbd_2r24shopNtB2_6Widget7compute")),
            "r2::shop::Widget::compute");
  EXPECT_EQ(short_name(demangle("_RINvNtCs35vA2Gx1xbd_2r24shop7generichEB4_")),
            "r2::shop::generic");
  EXPECT_EQ(short_name(demangle("_RNCNvCs35vA2Gx1xbd_2r24main0B3_")), "r2::main::{closure#0}");
  EXPECT_EQ(short_name("r2::main::{{closure}}"), "r2::main::{{closure}}");
  EXPECT_EQ(
      short_name(demangle("_RNvXCs35vA2Gx1xbd_2r2NtB2_1PNtNtCs6IL9ONYDOZW_4core3fmt7Display3fm"
                          "t")),
      "<r2::P as core::fmt::Display>::fmt");
  EXPECT_EQ(short_name("<core::ops::range::Range<u64> as core::iter::traits::collect::IntoIterator>"
                       "::into_iter"),
            "<core::ops::range::Range as core::iter::traits::collect::IntoIterator>::into_iter");
  EXPECT_EQ(short_name("core::ptr::drop_in_place::<std::rt::lang_start<()>::{closure#0}>"),
            "core::ptr::drop_in_place");
  EXPECT_EQ(short_name("core::ptr::drop_in_place<addr2line::lazy::LazyCell<core::result::Result<"
                       "addr2line::Lines,gimli::read::Error>>>"),
            "core::ptr::drop_in_place");
  EXPECT_EQ(short_name("<[u8]>::len"), "[u8]::len");
}

TEST(SymbolShortName, WithoutReturnType) {
  EXPECT_EQ(without_return_type("int ns::add<int>(int, int) const"),
            "ns::add<int>(int, int) const");
  EXPECT_EQ(without_return_type("ns::f(int)"), "ns::f(int)");
  EXPECT_EQ(without_return_type("r2::main"), "r2::main");
}

TEST(SymbolShortName, AmbiguityKept) {
  // Overloads: told apart by their parameters; template instances by their
  // arguments; a function alone keeps its short name.
  std::vector<std::string> in = {
      demangle("_ZN4shop6Widget7computeEi"),  // shop::Widget::compute(int)
      demangle("_ZN4shop6Widget7computeEd"),  // shop::Widget::compute(double)
      demangle("_ZN2ns3addIiEET_S1_S1_"),     // int ns::add<int>(int, int)
      demangle("_ZN2ns3addIdEET_S1_S1_"),     // double ns::add<double>(double, double)
      demangle("_ZNK2ns5Class6methodEi"),
      "main",
      "main",  // the same name twice: one function
  };
  EXPECT_EQ(distinguishing_names(in),
            (std::vector<std::string>{"shop::Widget::compute(int)", "shop::Widget::compute(double)",
                                      "ns::add<int>", "ns::add<double>", "ns::Class::method",
                                      "main", "main"}));
  // Same name and parameters, only the qualifier differs.
  EXPECT_EQ(distinguishing_names({"ns::C::get() const", "ns::C::get()"}),
            (std::vector<std::string>{"ns::C::get() const", "ns::C::get()"}));
  // A cold clone is other code than its function.
  EXPECT_EQ(distinguishing_names({"foo()", "foo() [clone .cold]"}),
            (std::vector<std::string>{"foo()", "foo() [clone .cold]"}));
  // Rust v0 generic instances.
  EXPECT_EQ(distinguishing_names({"r2::shop::generic::<u8>", "r2::shop::generic::<&str>"}),
            (std::vector<std::string>{"r2::shop::generic::<u8>", "r2::shop::generic::<&str>"}));
}

// Demangling and base names: what selectors match against.
#include <gtest/gtest.h>

#include "uprobes/demangle.h"

using atrace::uprobes::base_name;
using atrace::uprobes::demangle;

TEST(UprobesDemangle, Itanium) {
  EXPECT_EQ(demangle("_ZN2ns3addIiEET_S1_S1_"), "int ns::add<int>(int, int)");
  EXPECT_EQ(demangle("_ZNK2ns5Class6methodEi"), "ns::Class::method(int) const");
  EXPECT_EQ(demangle("_Z3foov.cold"), "foo() [clone .cold]");
}

TEST(UprobesDemangle, NonMangledUnchanged) {
  EXPECT_EQ(demangle("main"), "main");
  EXPECT_EQ(demangle("malloc"), "malloc");
  EXPECT_EQ(demangle("_Zgarbage"), "_Zgarbage");
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

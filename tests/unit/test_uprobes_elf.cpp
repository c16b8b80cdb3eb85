// ELF function symbols, checked against this test binary itself: the file
// offset read_functions() computes must hold the very bytes the CPU runs.
#include <dlfcn.h>
#include <fcntl.h>
#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "temp_file.h"
#include "uprobes/elf_symbols.h"
#include "uprobes/proc_maps.h"
#include "uprobes/resolve.h"
#include "uprobes/selector.h"

// AddressSanitizer (gcc defines __SANITIZE_ADDRESS__, clang has the feature).
#if defined(__SANITIZE_ADDRESS__)
#define ATRACE_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATRACE_TEST_UNDER_ASAN 1
#endif
#endif
#ifndef ATRACE_TEST_UNDER_ASAN
#define ATRACE_TEST_UNDER_ASAN 0
#endif

using atrace::uprobes::ElfError;
using atrace::uprobes::ElfFunction;
using atrace::uprobes::read_functions;

extern "C" __attribute__((noinline)) int atrace_test_known_function(int x) noexcept {
  // Enough work that the body is not trivial.
  int acc = 0;
  for (int i = 0; i < x; ++i) acc = acc * 31 + i;
  asm volatile("" : "+r"(acc));
  return acc;
}

// Aliases at the same address: the global one with the shortest name wins.
extern "C" int atrace_test_w(int) noexcept
    __attribute__((weak, alias("atrace_test_known_function")));
extern "C" int atrace_test_known_function_longer_alias(int) noexcept
    __attribute__((alias("atrace_test_known_function")));

namespace {

const ElfFunction* find(const std::vector<ElfFunction>& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.mangled == name) return &f;
  return nullptr;
}

// Load bias of the main executable (0 for non-PIE).
uintptr_t main_load_bias() {
  uintptr_t bias = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        *static_cast<uintptr_t*>(data) = info->dlpi_addr;
        return 1;  // the first object is the main executable
      },
      &bias);
  return bias;
}

std::string error_of(const std::string& path) {
  try {
    read_functions(path);
  } catch (const ElfError& e) {
    return e.what();
  }
  return "no error";
}

// Removed when the test ends, however it ends.
std::unique_ptr<atrace::testing::TempFile> temp_file(const std::string& tag,
                                                     const std::string& content) {
  auto f = std::make_unique<atrace::testing::TempFile>("-" + tag);
  f->set_bytes(content);
  return f;
}

}  // namespace

TEST(UprobesElf, FindsKnownFunctionWithFileOffsetOfItsCode) {
  volatile int sink = atrace_test_known_function(3);
  (void)sink;
  const auto funcs = read_functions("/proc/self/exe");
  const ElfFunction* f = find(funcs, "atrace_test_known_function");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->demangled, "atrace_test_known_function");
  EXPECT_GT(f->size, 4u);
  EXPECT_LT(f->size, 4096u);

  // st_value + load bias is where the function runs.
  const auto* code = reinterpret_cast<const uint8_t*>(&atrace_test_known_function);
  EXPECT_EQ(f->address + main_load_bias(), reinterpret_cast<uintptr_t>(code));

  // The file bytes at offset are the bytes in memory, over the whole body.
  std::vector<uint8_t> file_bytes(f->size);
  int fd = ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ssize_t n = ::pread(fd, file_bytes.data(), file_bytes.size(), static_cast<off_t>(f->offset));
  ::close(fd);
  ASSERT_EQ(n, static_cast<ssize_t>(f->size));
  EXPECT_EQ(std::memcmp(file_bytes.data(), code, f->size), 0);

  // first_bytes is the start of the same code.
  EXPECT_EQ(f->first_len, std::min<size_t>(16, f->size));
  EXPECT_EQ(std::memcmp(f->first_bytes, code, f->first_len), 0);
}

TEST(UprobesElf, CollapsesAliasesPreferringGlobalThenShortest) {
  const auto funcs = read_functions("/proc/self/exe");
  EXPECT_NE(find(funcs, "atrace_test_known_function"), nullptr);
  EXPECT_EQ(find(funcs, "atrace_test_w"), nullptr);  // weak loses though shorter
  EXPECT_EQ(find(funcs, "atrace_test_known_function_longer_alias"), nullptr);
  // The other names stay, as aliases a selector matches.
  const ElfFunction* f = find(funcs, "atrace_test_known_function");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(std::find(f->aliases.begin(), f->aliases.end(), "atrace_test_w"), f->aliases.end());
  EXPECT_NE(
      std::find(f->aliases.begin(), f->aliases.end(), "atrace_test_known_function_longer_alias"),
      f->aliases.end());
  // One entry per address, sorted.
  for (size_t i = 1; i < funcs.size(); ++i) EXPECT_LT(funcs[i - 1].address, funcs[i].address);
}

TEST(UprobesElf, DemanglesCppSymbols) {
  const auto funcs = read_functions("/proc/self/exe");
  // A GoogleTest function this binary certainly contains.
  bool found = false;
  for (const auto& f : funcs) {
    if (f.mangled.rfind("_Z", 0) == 0 && f.demangled.find("testing::") != std::string::npos) {
      found = true;
      EXPECT_NE(f.demangled, f.mangled);
      break;
    }
  }
  EXPECT_TRUE(found);
}

TEST(UprobesElf, ReadsLibcDynsym) {
  Dl_info info{};
  // gnu_get_libc_version: a libc function no sanitizer intercepts.
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&::gnu_get_libc_version), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  const std::string libc = info.dli_fname;
  const auto funcs = read_functions(libc);
  EXPECT_GT(funcs.size(), 1000u);
  // A function is found at the address it runs at, minus the load base.
  const uintptr_t at = reinterpret_cast<uintptr_t>(&::gnu_get_libc_version) -
                       reinterpret_cast<uintptr_t>(info.dli_fbase);
  const ElfFunction* fn = find(funcs, "gnu_get_libc_version");
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->address, at);
  EXPECT_EQ(std::memcmp(fn->first_bytes, reinterpret_cast<const void*>(&::gnu_get_libc_version),
                        fn->first_len),
            0);
  // strlen and memcpy are GNU IFUNCs.
  EXPECT_NE(find(funcs, "fopen"), nullptr);
  EXPECT_NE(find(funcs, "strlen"), nullptr);
  EXPECT_NE(find(funcs, "memcpy"), nullptr);
}

TEST(UprobesElf, Errors) {
  EXPECT_EQ(error_of("/nonexistent/atrace"),
            "/nonexistent/atrace: cannot open: No such file or directory");
  const auto text = temp_file("text", "#!/bin/sh\necho not an elf\n");
  EXPECT_EQ(error_of(text->path()), text->path() + ": not an ELF file");
  const auto empty = temp_file("empty", "");
  EXPECT_EQ(error_of(empty->path()), empty->path() + ": not an ELF file");

  // A valid ELF header with no sections at all: the stripped case.
  std::string hdr(64, '\0');
  const unsigned char ident[] = {0x7f, 'E', 'L', 'F', 2 /*64-bit*/, 1 /*LE*/, 1 /*version*/};
  std::memcpy(hdr.data(), ident, sizeof ident);
  hdr[16] = 2;     // e_type = ET_EXEC
  hdr[18] = 0x3e;  // e_machine = x86-64
  hdr[20] = 1;     // e_version
  hdr[52] = 64;    // e_ehsize
  const auto bare = temp_file("bare", hdr);
  EXPECT_EQ(error_of(bare->path()), bare->path() +
                                        ": no function symbols: stripped, and no debug file (it "
                                        "has no build id or debuglink)");
}

TEST(UprobesElf, ClosesItsFiles) {
  auto open_fds = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"),
                         std::filesystem::directory_iterator{});
  };
  const auto before = open_fds();
  for (int i = 0; i < 50; ++i) {
    read_functions("/proc/self/exe");
    EXPECT_THROW(read_functions("/etc/passwd"), ElfError);
  }
  EXPECT_EQ(open_fds(), before);
}

// libc's memcpy is an IFUNC: its symbol is the resolver, which runs once at
// load. The probe site is the implementation this process's loader picked,
// named memcpy (under ASan: the one libc's scope names, see below).
TEST(UprobesIfunc, LibcMemcpyIsProbedAtItsImplementation) {
  using namespace atrace::uprobes;
  std::string libc;
  for (const auto& m : process_modules(getpid()))
    if (m.name.rfind("libc.so", 0) == 0) libc = m.path;
  ASSERT_FALSE(libc.empty());
  const ElfFunction* resolver = nullptr;
  const auto funcs = read_functions(libc);
  for (const auto& f : funcs)
    if (f.mangled == "memcpy") resolver = &f;  // the default version only
  ASSERT_NE(resolver, nullptr);
  EXPECT_TRUE(resolver->ifunc) << "memcpy is not an IFUNC in " << libc;
  auto sites =
      resolve_probe_sites(parse_selectors("libc.so.6:memcpy"), {}, process_modules(getpid()));
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(sites[0].name, "memcpy");
  Dl_info info{};
  void* impl = dlsym(RTLD_DEFAULT, "memcpy");
#if ATRACE_TEST_UNDER_ASAN
  // AddressSanitizer interposes memcpy: this process's memcpy is the
  // interceptor in libasan, not libc's implementation, so the global lookup
  // is no oracle here. Libc's own scope still names the implementation its
  // resolver chose (the one the interceptor forwards to).
  ASSERT_NE(dladdr(impl, &info), 0);
  EXPECT_EQ(std::string(info.dli_fname).find("libc.so"), std::string::npos) << info.dli_fname;
  void* libc_handle = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(libc_handle, nullptr) << dlerror();
  impl = dlsym(libc_handle, "memcpy");
  dlclose(libc_handle);
#endif
  ASSERT_NE(dladdr(impl, &info), 0);
  EXPECT_EQ(sites[0].address,
            reinterpret_cast<uintptr_t>(impl) - reinterpret_cast<uintptr_t>(info.dli_fbase));
  EXPECT_NE(sites[0].address, resolver->address);
}

// Public names: libc's calloc is a weak alias of the global __libc_calloc,
// getpid of __getpid. The public name names the site; both select it.
TEST(UprobesElf, PublicNameWinsAndAliasesSelect) {
  using namespace atrace::uprobes;
  auto modules = process_modules(getpid());
  for (const char* sel : {"libc.so.6:calloc", "libc.so.6:__libc_calloc"}) {
    auto sites = resolve_probe_sites(parse_selectors(sel), {}, modules);
    ASSERT_EQ(sites.size(), 1u) << sel;
    EXPECT_EQ(sites[0].name, "calloc") << sel;
  }
  for (const char* sel : {"libc.so.6:getpid", "libc.so.6:__getpid"}) {
    auto sites = resolve_probe_sites(parse_selectors(sel), {}, modules);
    ASSERT_EQ(sites.size(), 1u) << sel;
    EXPECT_EQ(sites[0].name, "getpid") << sel;
  }
}

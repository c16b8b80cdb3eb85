/* bench/startup.sh's target: exits at once after one call of work(), the
 * function the tracers probe. */
__attribute__((noinline)) int work(int x) { return x * 2 + 1; }
int main(int argc, char** argv) {
  (void)argv;
  return work(argc) == 3 ? 0 : 1;
}

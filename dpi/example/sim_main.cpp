// The bench's main under Verilator without timing (--no-timing): it drives tb's clock, which is
// cheaper to build than a model with coroutines for `#` delays. $fatal ends the run with exit
// status 1 rather than an abort; $finish with 0.
#include <memory>

#include "Vtb.h"
#include "verilated.h"

int main(int argc, char** argv) {
  const std::unique_ptr<VerilatedContext> context{new VerilatedContext};
  context->commandArgs(argc, argv);
  context->fatalOnError(false);
  const std::unique_ptr<Vtb> tb{new Vtb{context.get()}};
  tb->clk = 0;
  // A bound on the run: 200 frames take about 60 000 cycles.
  for (long cycle = 0; cycle < 4'000'000 && !context->gotFinish(); ++cycle) {
    tb->clk = !tb->clk;
    tb->eval();
    context->timeInc(5);
  }
  tb->final();
  if (!context->gotFinish()) {
    VL_PRINTF("%%Error: the bench did not finish\n");
    return 2;
  }
  return context->gotError() ? 1 : 0;
}

/* The firmware example built for the host: the same component sources as the bare-metal image,
 * run as a test. */
#include <stdio.h>

#include "firmware.h"

int main(void) {
  const int r = fw_selftest();
  if (r == 0)
    printf(
        "firmware self-test: RH, PDU, packer, go-back-N (NACK, go back, resend) and the SUE "
        "instance: ok\n");
  else
    printf("firmware self-test failed at step %d\n", r);
  return r == 0 ? 0 : 1;
}

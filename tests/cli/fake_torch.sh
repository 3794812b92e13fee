#!/bin/sh
# A stand-in for a Python with torch, for bench train's PyTorch session:
# it ignores the script ffn-lab passes, prints the header, and answers each
# request (a block name on stdin) with a step of 2.5 ms. With "crash" in
# FAKE_TORCH, it dies of SIGSEGV after its first answer, as a Python whose
# torch crashes mid-run would.
echo '{"torch": "fake", "blas": "none"}'
while read -r block; do
    echo "{\"block\": \"$block\", \"ms\": 2.5}"
    [ "${FAKE_TORCH:-}" = crash ] && kill -SEGV $$
done
exit 0

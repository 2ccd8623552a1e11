"""Sample echo sessions, their golden turns and a realistic config (the contract-suite fixtures).

Shipped inside the package so ``funes integrations check echo`` can run the golden tests on an
installed funes-echo, not only in this repository's tests.
"""

"""
Divisors of sizes, however large: `divisors(n)` from the prime factorization `prime_factors(n)`
(trial division, then Pollard's rho). Work division and tiling enumerate the cuts of a dim with it.
"""

from __future__ import annotations

import itertools
import math

_SMALL_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)


def _is_prime(n: int) -> bool:
    """Miller-Rabin with the first 13 primes as bases: exact below 3.3e24, and far beyond in practice."""
    if n < 2:
        return False
    for p in _SMALL_PRIMES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in _SMALL_PRIMES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _pollard_rho(n: int) -> int:
    """A non-trivial factor of the odd composite `n` (Pollard's rho, Floyd cycles, fixed seeds)."""
    for c in itertools.count(1):
        x = y = 2
        d = 1
        while d == 1:
            x = (x * x + c) % n
            y = (y * y + c) % n
            y = (y * y + c) % n
            d = math.gcd(abs(x - y), n)
        if d != n:
            return d
    raise AssertionError("unreachable")


def prime_factors(n: int) -> dict[int, int]:
    """
    The prime factorization of `n >= 1` as {prime: exponent}: `prime_factors(360)` is
    {2: 3, 3: 2, 5: 1}. Trial division by small primes, then Pollard's rho: milliseconds even
    for 64-bit sizes, where counting up to `n` would never finish.
    """
    factors: dict[int, int] = {}
    for p in _SMALL_PRIMES:
        while n % p == 0:
            factors[p] = factors.get(p, 0) + 1
            n //= p
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if _is_prime(m):
            factors[m] = factors.get(m, 0) + 1
            continue
        d = _pollard_rho(m)
        stack += [d, m // d]
    return dict(sorted(factors.items()))


def divisors(n: int) -> list[int]:
    """The divisors of `n >= 1`, increasing, from its factorization: `divisors(12)` is [1, 2, 3, 4, 6, 12]."""
    result = [1]
    for prime, exponent in prime_factors(n).items():
        result = [d * prime**e for d in result for e in range(exponent + 1)]
    return sorted(result)


__all__ = ["divisors", "prime_factors"]

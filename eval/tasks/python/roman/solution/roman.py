def to_roman(n):
    """The Roman numeral of n (1..3999)."""
    if not isinstance(n, int) or not 1 <= n <= 3999:
        raise ValueError(f"{n} has no Roman numeral")
    out = []
    for value, sign in [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
                        (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"),
                        (5, "V"), (4, "IV"), (1, "I")]:
        while n >= value:
            out.append(sign)
            n -= value
    return "".join(out)

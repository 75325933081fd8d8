def to_roman(n):
    """The Roman numeral of n (1..3999)."""
    raise NotImplementedError

def median(values):
    """The middle value of `values` (the mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of nothing")
    ordered = sorted(values)
    return ordered[len(ordered) // 2]

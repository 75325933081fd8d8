def line(item):
    return f"{item.name}: {item.price:.2f} {item.currency}"

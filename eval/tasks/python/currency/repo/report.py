def line(item):
    return f"{item.name}: {item.price}"

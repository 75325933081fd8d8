/// Seconds in a duration like "1h30m"; None when it is not one.
pub fn parse_duration(text: &str) -> Option<u64> {
    let mut total = 0u64;
    let mut number = String::new();
    let mut last = 0;
    let mut any = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let (rank, scale) = match c {
            'h' => (1, 3600),
            'm' => (2, 60),
            's' => (3, 1),
            _ => return None,
        };
        if number.is_empty() || rank <= last {
            return None;
        }
        total += number.parse::<u64>().ok()? * scale;
        number.clear();
        last = rank;
        any = true;
    }
    (any && number.is_empty()).then_some(total)
}

/// Seconds in a duration like "1h30m"; None when it is not one.
pub fn parse_duration(text: &str) -> Option<u64> {
    let _ = text;
    todo!()
}

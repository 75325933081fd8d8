use duration::parse_duration;

#[test]
fn good() {
    assert_eq!(parse_duration("90s"), Some(90));
    assert_eq!(parse_duration("5m"), Some(300));
    assert_eq!(parse_duration("1h30m"), Some(5400));
    assert_eq!(parse_duration("2h5m10s"), Some(7510));
}

#[test]
fn bad() {
    for t in ["", "h", "10", "5x", "1m1h", "1h1h", "m5"] {
        assert_eq!(parse_duration(t), None, "{t}");
    }
}

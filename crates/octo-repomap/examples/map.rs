//! Prints the repository map of a directory: `cargo run -p octo-repomap --example map -- DIR
//! [BUDGET] [FOCUS…]` (the cache is kept in memory only).

fn main() {
    let mut args = std::env::args().skip(1);
    let dir = args.next().unwrap_or_else(|| ".".into());
    let budget = args.next().and_then(|b| b.parse().ok());
    let focus: Vec<String> = args.collect();
    let map = octo_repomap::RepoMap::new(std::path::Path::new(&dir), None);
    let built = map.build(&octo_repomap::Request { focus, budget });
    print!("{}", built.text);
}

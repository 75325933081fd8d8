//! Which definitions matter: files are nodes, a reference from file A to a name file B defines
//! is an edge A → B, and PageRank — personalised towards the files in focus — says how much
//! each file matters; a file's weight then flows along its edges to the definitions it uses.
//! Names defined in many places or private-looking (`_x`) carry less; names in focus carry more.

use crate::tags::{Def, FileTags};
use std::collections::{HashMap, HashSet};

/// Damping: the chance of following an edge rather than jumping back to the focus.
const DAMPING: f64 = 0.85;

/// Iterations of the power method (enough for the ranks' order to settle).
const ITERATIONS: usize = 40;

/// A name defined in more files than this (`get`, `render`, `toString` in a large tree) links
/// nothing: its edges would number referrers × definers and say little.
const MAX_DEFINERS: usize = 20;

/// What the ranking leans towards.
#[derive(Debug, Clone, Default)]
pub struct Focus {
    /// Files named for this request (relative paths): the walk starts from them.
    pub files: HashSet<String>,
    /// Files of the conversation so far: a weaker start.
    pub seen: HashSet<String>,
    /// Symbol names asked about: their definitions and the edges to them weigh more.
    pub symbols: HashSet<String>,
}

/// A definition with its score.
#[derive(Debug, Clone, Copy)]
pub struct Ranked<'a> {
    /// Its file's path.
    pub file: &'a str,
    /// The definition.
    pub def: &'a Def,
    /// Its score (only the order matters).
    pub score: f64,
}

struct Edge {
    from: usize,
    to: usize,
    name: usize,
    weight: f64,
}

/// Every definition in `files`, most important first.
pub fn rank<'a>(files: &[(&'a str, &'a FileTags)], focus: &Focus) -> Vec<Ranked<'a>> {
    let n = files.len();
    if n == 0 {
        return Vec::new();
    }
    let graph = Graph::new(files, focus);
    let mut out_weight = vec![0.0; n];
    for e in &graph.edges {
        out_weight[e.from] += e.weight;
    }
    let start = personalisation(files, focus);
    let ranks = pagerank(&graph.edges, &out_weight, &start);
    // A definition's score: what flows to it along the edges into its name — what the focus
    // files (and, less, the conversation's) use counting most, as the request is about them —
    // plus a little of its own file's rank so that unreferenced definitions still order by file.
    let lean = focus_weights(files, focus, [20.0, 3.0, 1.0]);
    let mut flow: HashMap<(usize, usize), f64> = HashMap::new();
    for e in &graph.edges {
        *flow.entry((e.to, e.name)).or_default() +=
            lean[e.from] * ranks[e.from] * e.weight / out_weight[e.from];
    }
    let mut ranked = Vec::new();
    for (i, (file, tags)) in files.iter().enumerate() {
        let base = ranks[i] * 1e-3 / tags.defs.len().max(1) as f64;
        for d in &tags.defs {
            let k = graph.name_index.get(d.name.as_str());
            let mut score = base + k.and_then(|k| flow.get(&(i, *k))).copied().unwrap_or(0.0);
            if focus.symbols.contains(&d.name) {
                score += 1.0;
            }
            ranked.push(Ranked { file, def: d, score });
        }
    }
    ranked.sort_by(|a, b| {
        b.score.total_cmp(&a.score).then_with(|| a.file.cmp(b.file)).then_with(|| a.def.line.cmp(&b.def.line))
    });
    ranked
}

/// The reference graph: an index per defined name, and the weighted edges.
struct Graph<'a> {
    name_index: HashMap<&'a str, usize>,
    edges: Vec<Edge>,
}

impl<'a> Graph<'a> {
    fn new(files: &[(&'a str, &'a FileTags)], focus: &Focus) -> Self {
        let n = files.len();
        let mut definers: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, (_, tags)) in files.iter().enumerate() {
            for d in &tags.defs {
                let list = definers.entry(d.name.as_str()).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
        }
        let name_index: HashMap<&str, usize> = definers.keys().enumerate().map(|(i, s)| (*s, i)).collect();
        // How many files refer to each defined name: a name most files use is vocabulary
        // (`len`, `new`, `iter`), not a landmark.
        let mut referrers = vec![0usize; name_index.len()];
        for (_, tags) in files {
            for name in tags.refs.keys() {
                if let Some(&k) = name_index.get(name.as_str()) {
                    referrers[k] += 1;
                }
            }
        }
        let mut edges = Vec::new();
        for (from, (_, tags)) in files.iter().enumerate() {
            for (name, count) in &tags.refs {
                let Some(to_list) = definers.get(name.as_str()).filter(|l| l.len() <= MAX_DEFINERS) else {
                    continue;
                };
                if to_list.contains(&from) {
                    // The file's own definition, most likely.
                    continue;
                }
                let k = name_index[name.as_str()];
                let common = referrers[k] >= 10 && referrers[k] * 10 > n;
                let weight = f64::from(*count).sqrt() * name_weight(name, to_list.len(), common, focus);
                edges.extend(spread(files, from, to_list, weight).map(|(to, weight)| Edge {
                    from,
                    to,
                    name: k,
                    weight,
                }));
            }
        }
        Self { name_index, edges }
    }
}

/// A reference's weight over the files defining its name: a name defined in several most
/// likely means the nearest (same crate, same package), which share the weight; the farther
/// ones get a tenth, and tests, benches and examples less.
fn spread<'f>(
    files: &'f [(&str, &FileTags)],
    from: usize,
    to_list: &'f [usize],
    weight: f64,
) -> impl Iterator<Item = (usize, f64)> + 'f {
    let nearness = move |to: usize| shared_dirs(files[from].0, files[to].0);
    let nearest = to_list.iter().map(|&to| nearness(to)).max().unwrap_or(0);
    let near_count = to_list.iter().filter(|&&to| nearness(to) == nearest).count().max(1);
    to_list.iter().map(move |&to| {
        let mut w = weight / near_count as f64;
        if nearness(to) < nearest {
            w *= 0.1;
        }
        if is_test_path(files[to].0) {
            w *= 0.3;
        }
        (to, w)
    })
}

/// How much a reference to `name` (defined in `definers` files; used by most files when
/// `common`) counts: specific names (long, with `_` or a capital inside) more, short, private,
/// common or many-times-defined names less.
fn name_weight(name: &str, definers: usize, common: bool, focus: &Focus) -> f64 {
    let mut w = 1.0;
    if focus.symbols.contains(name) {
        w *= 10.0;
    }
    let len = name.chars().count();
    let compound = name.trim_start_matches('_').contains('_') || name.chars().skip(1).any(char::is_uppercase);
    if len >= 8 && compound && !common {
        w *= 4.0;
    }
    if len < 4 {
        w *= 0.2;
    }
    if name.starts_with('_') {
        w *= 0.1;
    }
    if definers > 5 {
        w *= 0.1;
    }
    if common {
        w *= 0.2;
    }
    w
}

/// How many leading directories two paths share.
fn shared_dirs(a: &str, b: &str) -> usize {
    let da = a.rsplit_once('/').map_or("", |(d, _)| d);
    let db = b.rsplit_once('/').map_or("", |(d, _)| d);
    if da.is_empty() || db.is_empty() {
        return 0;
    }
    da.split('/').zip(db.split('/')).take_while(|(x, y)| x == y).count()
}

/// Whether `path` holds tests, benchmarks or examples (their definitions are rarely the
/// landmarks a map is for).
fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    path.split('/')
        .any(|part| matches!(part, "tests" | "test" | "benches" | "examples" | "__tests__" | "testdata"))
        || file.starts_with("test_")
        || file.contains("_test.")
        || file.contains(".test.")
        || file.contains(".spec.")
}

/// Each file's weight: the first for a focus file, the second for one of the conversation's,
/// the third for the rest.
fn focus_weights(files: &[(&str, &FileTags)], focus: &Focus, [named, seen, other]: [f64; 3]) -> Vec<f64> {
    let weight = |f: &str| {
        if focus.files.contains(f) {
            named
        } else if focus.seen.contains(f) {
            seen
        } else {
            other
        }
    };
    files.iter().map(|(f, _)| weight(f)).collect()
}

/// Where the walk restarts: the focus files, else the conversation's files, else anywhere.
fn personalisation(files: &[(&str, &FileTags)], focus: &Focus) -> Vec<f64> {
    let mut start = focus_weights(files, focus, [1.0, 0.3, 0.0]);
    let total: f64 = start.iter().sum();
    if total == 0.0 {
        return vec![1.0 / files.len() as f64; files.len()];
    }
    for s in &mut start {
        *s /= total;
    }
    start
}

/// Personalised PageRank by the power method; a file without edges gives its rank back to
/// the start vector.
fn pagerank(edges: &[Edge], out_weight: &[f64], start: &[f64]) -> Vec<f64> {
    let n = start.len();
    let mut rank = start.to_vec();
    for _ in 0..ITERATIONS {
        let mut next = vec![0.0; n];
        let dangling: f64 = (0..n).filter(|&i| out_weight[i] == 0.0).map(|i| rank[i]).sum();
        for e in edges {
            next[e.to] += DAMPING * rank[e.from] * e.weight / out_weight[e.from];
        }
        for i in 0..n {
            next[i] += (1.0 - DAMPING) * start[i] + DAMPING * dangling * start[i];
        }
        rank = next;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn file(defs: &[&str], refs: &[&str]) -> FileTags {
        FileTags {
            defs: defs
                .iter()
                .enumerate()
                .map(|(i, n)| Def {
                    name: (*n).into(),
                    kind: "function".into(),
                    line: i as u32 + 1,
                    text: format!("fn {n}()"),
                })
                .collect(),
            refs: refs.iter().map(|r| ((*r).to_owned(), 1)).collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn widely_used_definitions_rank_first() {
        let core = file(&["parse_config", "unused_helper"], &[]);
        let a = file(&["run_a"], &["parse_config"]);
        let b = file(&["run_b"], &["parse_config"]);
        let files = [("core.rs", &core), ("a.rs", &a), ("b.rs", &b)];
        let ranked = rank(&files, &Focus::default());
        assert_eq!(ranked[0].def.name, "parse_config");
        assert_eq!(ranked.len(), 4);
    }

    #[test]
    fn the_focus_files_use_rank_first() {
        let store = file(&["open_store"], &[]);
        let net = file(&["open_socket"], &[]);
        let x = file(&["x_main"], &["open_store"]);
        let y = file(&["y_main"], &["open_socket"]);
        let z = file(&["z_main"], &["open_socket"]);
        let files = [("store.rs", &store), ("net.rs", &net), ("x.rs", &x), ("y.rs", &y), ("z.rs", &z)];
        let plain = rank(&files, &Focus::default());
        assert_eq!(plain[0].def.name, "open_socket");
        let focus = Focus { files: ["x.rs".to_owned()].into(), ..Default::default() };
        let focused = rank(&files, &focus);
        assert_eq!(focused[0].def.name, "open_store");
    }

    #[test]
    fn a_symbol_in_focus_ranks_first() {
        let a = file(&["alpha", "beta"], &[]);
        let b = file(&["gamma"], &["alpha"]);
        let focus = Focus { symbols: ["beta".to_owned()].into(), ..Default::default() };
        let ranked = rank(&[("a.rs", &a), ("b.rs", &b)], &focus);
        assert_eq!(ranked[0].def.name, "beta");
    }

    #[test]
    fn shared_directories() {
        assert_eq!(shared_dirs("crates/a/src/x.rs", "crates/a/src/y.rs"), 3);
        assert_eq!(shared_dirs("crates/a/src/x.rs", "crates/b/src/y.rs"), 1);
        assert_eq!(shared_dirs("x.rs", "crates/b/y.rs"), 0);
    }

    #[test]
    fn nothing_to_rank() {
        assert!(rank(&[], &Focus::default()).is_empty());
        let lone = file(&[], &["missing"]);
        assert!(rank(&[("a.rs", &lone)], &Focus::default()).is_empty());
    }
}

/// "Fizz" for multiples of 3, "Buzz" for 5, "FizzBuzz" for both, else the number; for 1..=n.
pub fn fizzbuzz(n: u32) -> Vec<String> {
    (1..n)
        .map(|i| {
            if i % 3 == 0 {
                "Fizz".to_string()
            } else if i % 5 == 0 {
                "Buzz".to_string()
            } else if i % 15 == 0 {
                "FizzBuzz".to_string()
            } else {
                i.to_string()
            }
        })
        .collect()
}

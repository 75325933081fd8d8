use fizzbuzz::fizzbuzz;

#[test]
fn first_fifteen() {
    let got = fizzbuzz(15);
    assert_eq!(got.len(), 15);
    assert_eq!(got[0], "1");
    assert_eq!(got[2], "Fizz");
    assert_eq!(got[4], "Buzz");
    assert_eq!(got[14], "FizzBuzz");
}

#[test]
fn none() {
    assert!(fizzbuzz(0).is_empty());
}

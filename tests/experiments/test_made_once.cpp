// experiments/support/made_once.h: a value made once per key and shared,
// a failed make not kept, the oldest values dropped past the count or the
// byte budget (and made again when asked).
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "experiments/support/made_once.h"

using ffn::experiments::MadeOnce;

TEST_CASE("MadeOnce makes a key's value once, keeps no failure, and drops the oldest past its bounds") {
    int made = 0;
    MadeOnce<std::string> memo(2, 1000, [](const std::string& s) { return s.size(); });
    const auto make = [&](const std::string& v) {
        return [&made, v] {
            ++made;
            return v;
        };
    };
    const auto a = memo.get("a", make("alpha"));
    CHECK(*a == "alpha");
    CHECK(memo.get("a", make("other")).get() == a.get());  // the same object, not made again
    CHECK(made == 1);
    // A make that throws: the caller meets the error, and the next asks again.
    CHECK_THROWS_AS(memo.get("bad", [&]() -> std::string { throw std::runtime_error("no"); }), std::runtime_error);
    CHECK(*memo.get("bad", make("fine")) == "fine");
    CHECK(made == 2);
    // Two kept at most: "c" drops "a", the oldest, which is made again when asked.
    (void)memo.get("c", make("c"));
    CHECK(made == 3);
    (void)memo.get("a", make("alpha"));
    CHECK(made == 4);
    // The byte budget: a value of 2000 bytes pushes out every older one.
    MadeOnce<std::string> small(10, 1000, [](const std::string& s) { return s.size(); });
    (void)small.get("x", make("x"));
    (void)small.get("big", make(std::string(2000, 'b')));
    (void)small.get("x", make("x"));
    CHECK(made == 7);
}

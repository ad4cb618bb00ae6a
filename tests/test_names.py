"""The one rule by which every view of a game names its snakes (snake.records.names)."""

from snake.records.names import snake_names

UUID_A = "1f1f2b41-d8cb-4cc9-853f-c7ec4e880bce"
UUID_B = "908404b4-5b4e-4f6c-9a51-2b4c7f1e0a11"


def test_snakes_are_named_by_their_names():
    assert snake_names([(UUID_A, "nuppeppou"), (UUID_B, "copperhead")]) == {
        UUID_A: "nuppeppou", UUID_B: "copperhead"}


def test_two_snakes_sharing_a_name_are_told_apart_by_the_start_of_their_ids():
    names = snake_names([(UUID_A, "hydra"), (UUID_B, "hydra"), ("c", "viper")])
    assert names == {UUID_A: "hydra#1f1f", UUID_B: "hydra#9084", "c": "viper"}
    # ids alike at first: as much of each as tells them apart (the arena's ids)
    names = snake_names([("snake-0-4c4c870f", "search"), ("snake-1-4c4c870f", "search"),
                         ("snake-2-4c4c870f", "grower")])
    assert names == {"snake-0-4c4c870f": "search#snake-0", "snake-1-4c4c870f": "search#snake-1",
                     "snake-2-4c4c870f": "grower"}
    # short ids whole, and an id that begins another still told from it
    assert snake_names([("s1", "x"), ("s10", "x"), ("abcd", "y"), ("abcd1", "y")]) == {
        "s1": "x#s1", "s10": "x#s10", "abcd": "y#abcd", "abcd1": "y#abcd1"}


def test_every_snake_gets_a_name_of_its_own():
    snakes = [(f"{k:04d}-{'f' * 8}", "same") for k in range(12)] + [("solo", "other")]
    shown = snake_names(snakes)
    assert len(set(shown.values())) == len(snakes)
    assert shown["solo"] == "other" and all(v.startswith("same#") for k, v in shown.items()
                                            if k != "solo")


def test_a_snake_without_a_name_is_shown_by_its_id_and_counted_once():
    # given once per turn: counted once, under its first name (a later empty one is no name)
    assert snake_names([("a", ""), ("b", "bob"), ("a", "alice"), ("b", ""), ("b", "bobby")]) == {
        "a": "alice", "b": "bob"}
    assert snake_names([("a", ""), ("b", "")]) == {"a": "a", "b": "b"}

"""The garbage collector is held off while a report is built, and given back as it was."""

import gc

from llmjury.collector import held_off


def test_held_off_gives_the_collector_back_as_it_was():
    assert gc.isenabled()
    with held_off():
        assert not gc.isenabled()
        with held_off():  # a nested hold keeps the outer one
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_held_off_gives_it_back_when_the_report_fails():
    try:
        with held_off():
            raise ValueError("a family's aggregate failed")
    except ValueError:
        pass
    assert gc.isenabled()

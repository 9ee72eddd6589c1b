"""The viewer in a real headless Chromium: list, filter, sort, open a rollout, markup shown as text."""

from __future__ import annotations

import json

from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait
from viewer_rollouts import HOSTILE

from gym_llm.viewer import ViewerServer, write_html


def rows_of(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def wait_for(driver, condition, timeout: float = 15):
    try:
        return WebDriverWait(driver, timeout).until(lambda d: condition(d))
    except TimeoutException:
        state = driver.execute_script(
            "return ['range', 'f-env', 'f-failure', 'f-masked', 'f-min', 'f-max'].map(id => {"
            "  const e = document.getElementById(id); return id + '=' + (e.value ?? e.textContent); })"
        )
        raise AssertionError(f"timed out; the page shows {state}") from None


def list_range(driver) -> str:
    return driver.find_element(By.ID, "range").text


def listed(driver) -> list[list[str]]:
    """The cells of the listed rows, read in one go (the list may be redrawn between two reads)."""
    return driver.execute_script(
        "return [...document.querySelectorAll('#list tbody tr')]"
        ".map(tr => [...tr.cells].map(td => td.innerText))"
    )


def open_first(driver, expect: str) -> None:
    driver.find_element(By.CSS_SELECTOR, "#list tbody tr").click()
    wait_for(driver, lambda d: expect in d.find_element(By.ID, "detail-pane").text)


def check_hostile_rollout_is_text(driver) -> None:
    answer = driver.find_elements(By.CSS_SELECTOR, "#detail-pane .msg.assistant .text")
    assert [a.text for a in answer] == [HOSTILE]
    assert driver.find_elements(By.CSS_SELECTOR, "#detail-pane img, #detail-pane script") == []
    assert driver.execute_script("return window.__pwned === undefined") is True


def test_served_page_lists_filters_sorts_and_shows_a_rollout(browser, rollouts_file, artifacts):
    rows = rows_of(rollouts_file)
    with ViewerServer(rollouts_file) as viewer:
        browser.get(viewer.url)
        wait_for(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
        assert list_range(browser) == "1–24 of 24"
        assert len(listed(browser)) == 24

        # filter by env and reward
        Select(browser.find_element(By.ID, "f-env")).select_by_value("llm/Weather-v0")
        wait_for(browser, lambda d: list_range(d) == "1–12 of 12")
        assert {row[1] for row in listed(browser)} == {"llm/Weather-v0"}
        browser.find_element(By.ID, "f-min").send_keys("1")
        wait_for(browser, lambda d: list_range(d) == "1–6 of 6")
        assert {row[4] for row in listed(browser)} == {"1"}

        # sort by turns, then descending by rollout number
        browser.find_element(By.CSS_SELECTOR, 'th[data-sort="index"]').click()
        wait_for(
            browser,
            lambda d: (
                "sorted-desc"
                in d.find_element(By.CSS_SELECTOR, 'th[data-sort="index"]').get_attribute("class")
            ),
        )
        numbers = [int(row[0]) for row in listed(browser)]
        assert numbers == sorted(numbers, reverse=True)

        # one rewarded rollout as a chat
        open_first(browser, "tool call · get_weather")
        index = int(listed(browser)[0][0])
        source = rows[index]
        pane = browser.find_element(By.ID, "detail-pane")
        assert (
            pane.find_element(By.TAG_NAME, "h2").text
            == f"llm/Weather-v0 · task {source['task_index']} · repeat {source['repeat_index']}"
        )
        roles = [e.text for e in pane.find_elements(By.CSS_SELECTOR, ".msg .who")]
        call = next(item for item in source["response"]["output"] if item["type"] == "function_call")
        output = next(item for item in source["response"]["output"] if item["type"] == "function_call_output")
        assert roles[:2] == ["developer", "user"]
        assert f"tool call · get_weather · {call['call_id']}" in roles
        assert f"tool output · get_weather · {output['call_id']}" in roles
        assert pane.find_element(By.CSS_SELECTOR, ".msg.reasoning .text").text == "Let me use the tools."
        arguments = pane.find_element(By.CSS_SELECTOR, ".msg.tool-call pre").text
        assert json.loads(arguments) == json.loads(call["arguments"])
        tool_output = pane.find_element(By.CSS_SELECTOR, ".msg.tool-output pre").text
        assert json.loads(tool_output) == json.loads(output["output"])
        verify = pane.find_elements(By.CSS_SELECTOR, "table.kv")[0].text
        assert "reward 1" in verify.replace("\n", " ")
        assert "component: accuracy" in verify or source["reward_components"] == {}
        browser.save_screenshot(str(artifacts / "viewer_rollout.png"))

        # the wrong answers: markup in the model's message stays text
        browser.find_element(By.ID, "f-min").send_keys(Keys.BACKSPACE)
        browser.find_element(By.ID, "f-max").send_keys("0")
        Select(browser.find_element(By.ID, "f-masked")).select_by_value("hide")
        wait_for(browser, lambda d: list_range(d) == "1–3 of 3")
        open_first(browser, "I do not know.")
        check_hostile_rollout_is_text(browser)
        browser.save_screenshot(str(artifacts / "viewer_hostile.png"))


def test_static_file_works_offline_and_pages_in_the_browser(browser, rollouts_file, tmp_path, artifacts):
    out = tmp_path / "rollouts.html"
    assert write_html(rollouts_file, out, limit=20) == (20, 24)
    assert "<script>window.__pwned" not in out.read_text()
    browser.get(out.as_uri())
    wait_for(browser, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert browser.find_element(By.ID, "note").text == "20 of 24 rollouts (static file)"
    assert list_range(browser) == "1–20 of 20"
    Select(browser.find_element(By.ID, "f-failure")).select_by_value("model_error")
    wait_for(browser, lambda d: list_range(d) == "1–5 of 5")
    assert all(row[6] == "model_error (masked)" for row in listed(browser))
    Select(browser.find_element(By.ID, "f-failure")).select_by_value("")
    browser.find_element(By.ID, "f-max").send_keys("0")
    Select(browser.find_element(By.ID, "f-masked")).select_by_value("hide")
    wait_for(browser, lambda d: list_range(d) == "1–5 of 5")
    open_first(browser, "I do not know.")
    check_hostile_rollout_is_text(browser)
    browser.save_screenshot(str(artifacts / "viewer_static.png"))

"""The dashboard in a real headless browser (Debian's chromium, driven by Selenium
through chromium-driver; nothing is downloaded), on every store, plus its routes
next to SQS's own on `/`."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import boto3
import httpx
import pytest

from .processes import start_hopper

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
# The time the page may take to show what the server holds (it refreshes every 2 s).
SHOWN_WITHIN = 15


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if CHROMIUM is None or CHROMEDRIVER is None:
        reason = "Debian's chromium and chromium-driver are not installed (apt-get install"
        reason += " chromium chromium-driver; .ci/run does it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_dead_letter(sqs, body: str) -> tuple[str, str, str, str]:
    """A source queue with a dead-letter queue holding one message with `body`."""
    dlq_name, source_name = unique("dash-dlq"), unique("dash-src")
    dlq = sqs.create_queue(QueueName=dlq_name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"]
    policy = {"deadLetterTargetArn": arn["QueueArn"], "maxReceiveCount": "1"}
    source = sqs.create_queue(
        QueueName=source_name, Attributes={"RedrivePolicy": json.dumps(policy)}
    )["QueueUrl"]
    sqs.send_message(QueueUrl=source, MessageBody=body)
    sqs.receive_message(QueueUrl=source, VisibilityTimeout=0)
    assert "Messages" not in sqs.receive_message(QueueUrl=source)  # moved it
    return source_name, source, dlq_name, dlq


def test_the_dashboard_shows_live_queue_data_and_peeks_at_dead_letters(
    browser, sqs, endpoint, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    dead_body = "<b>order 42 failed</b> & stays text"
    source_name, source, dlq_name, dlq = make_dead_letter(sqs, dead_body)
    for n in range(3):
        sqs.send_message(QueueUrl=source, MessageBody=f"job {n}")

    browser.get(f"{endpoint}/")
    wait = WebDriverWait(browser, SHOWN_WITHIN)

    def cell(queue: str, name: str) -> str:
        rows = browser.find_elements(By.CSS_SELECTOR, f'tr[data-queue="{queue}"] td.{name}')
        return rows[0].text if rows else ""

    wait.until(lambda _: cell(source_name, "visible") == "3")
    assert cell(source_name, "in-flight") == "0"
    source_row = browser.find_element(By.CSS_SELECTOR, f'tr[data-queue="{source_name}"]')
    assert f"→ {dlq_name}" in source_row.text
    assert "1 dead" in source_row.text
    dlq_row = browser.find_element(By.CSS_SELECTOR, f'tr[data-queue="{dlq_name}"]')
    assert f"dead-letter queue of {source_name}" in dlq_row.text

    # Live refresh: what the server holds now shows up without a reload, and the
    # depth chart gains a sample per refresh.
    sqs.send_message_batch(
        QueueUrl=source, Entries=[{"Id": str(n), "MessageBody": "more"} for n in range(4)]
    )
    wait.until(lambda _: cell(source_name, "visible") == "7")
    points = source_row_points(browser, source_name)
    assert len(points) >= 2 and points[-1] != points[0]

    dlq_row = browser.find_element(By.CSS_SELECTOR, f'tr[data-queue="{dlq_name}"]')
    dlq_row.find_element(By.CSS_SELECTOR, "button.peek").click()
    wait.until(lambda _: browser.find_element(By.ID, "peek").get_attribute("data-count") == "1")
    peeked = browser.find_element(By.ID, "peek-messages").text
    assert dead_body in peeked  # as text: the markup was not interpreted
    assert not browser.find_elements(By.CSS_SELECTOR, "#peek-messages b")
    assert source_name in peeked

    screenshot = tmp_path / "dashboard.png"
    assert browser.save_screenshot(str(screenshot))
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size > 10_000

    # The peek received nothing: the dead message is still visible, never delivered.
    attributes = sqs.get_queue_attributes(
        QueueUrl=dlq,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    assert attributes == {
        "ApproximateNumberOfMessages": "1", "ApproximateNumberOfMessagesNotVisible": "0"
    }
    [dead] = sqs.receive_message(
        QueueUrl=dlq, MessageSystemAttributeNames=["ApproximateReceiveCount"]
    )["Messages"]
    # One receive from the source, carried over, and this one.
    assert dead["Attributes"]["ApproximateReceiveCount"] == "2"


def source_row_points(browser, queue: str) -> list[str]:
    from selenium.webdriver.common.by import By

    line = browser.find_element(By.CSS_SELECTOR, f'tr[data-queue="{queue}"] svg polyline')
    return (line.get_attribute("points") or "").split()


def test_a_browser_on_slash_gets_the_page_and_sqs_clients_do_not(sqs, endpoint) -> None:
    page = httpx.get(f"{endpoint}/", headers={"accept": "text/html,*/*"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert "dashboard.js" in page.text
    assert httpx.get(f"{endpoint}/dashboard").text == page.text
    # A query-protocol GET that names an action is SQS's, whatever it accepts.
    listed = httpx.get(
        f"{endpoint}/", params={"Action": "ListQueues", "Version": "2012-11-05"},
        headers={"accept": "text/html"},
    )
    assert listed.status_code == 200
    assert "<ListQueuesResponse" in listed.text
    # And SQS's POST / is untouched.
    assert sqs.list_queues()["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_peek_refuses_bad_limits_and_unknown_queues(sqs, endpoint) -> None:
    name = unique("peeked")
    sqs.create_queue(QueueName=name)
    base = f"{endpoint}/dashboard/peek"
    account = "000000000000"
    for limit, status in (("0", 400), ("101", 400), ("ten", 400), ("100", 200), ("1", 200)):
        response = httpx.get(base, params={"account": account, "queue": name, "limit": limit})
        assert response.status_code == status, (limit, response.text)
    assert httpx.get(base, params={"account": account, "queue": unique("no")}).status_code == 404
    assert httpx.get(base, params={"queue": name}).status_code == 400


def test_with_sigv4_auth_the_unauthenticated_dashboard_shows_no_message_bodies(
    tmp_path: Path,
) -> None:
    keys = tmp_path / "credentials.toml"
    keys.write_text(
        '[[credentials]]\naccess_key = "AKIDDASH"\nsecret_key = "s"\naccount_id = "111111111111"\n'
    )
    server = start_hopper(
        "--auth", "sigv4", "--credentials-file", str(keys), log=tmp_path / "hopper.log"
    )
    try:
        signed = boto3.client(
            "sqs", endpoint_url=server.url, region_name="us-east-1",
            aws_access_key_id="AKIDDASH", aws_secret_access_key="s",
        )
        signed.create_queue(QueueName="private")
        peek = httpx.get(
            f"{server.url}/dashboard/peek", params={"account": "111111111111", "queue": "private"}
        )
        assert peek.status_code == 403
        assert "--auth sigv4" in peek.json()["error"]
        listed = httpx.get(f"{server.url}/dashboard/queues").json()["queues"]
        assert [queue["name"] for queue in listed] == ["private"]
    finally:
        code = server.stop()
    assert code == 0, server.output()

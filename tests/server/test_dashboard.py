"""The console in a real headless browser (Debian's chromium, driven by Selenium
through chromium-driver; nothing is downloaded), on the in-memory store and on
PostgreSQL, without auth and with `--auth sigv4`: one walk through its pages and
every action, and with auth on, that a tenant's page shows nothing of another's."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from .consoles import TENANT_A, TENANT_B, Server, console_server, dead_letter_pair, depth, unique

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
# The time the page may take to show what the server holds (it refreshes every 2 s).
SHOWN_WITHIN = 15
SERVERS = ["memory-off", "postgres-off", "memory-sigv4", "postgres-sigv4"]


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
                     "--window-size=1280,1600", "--disable-gpu"):
        options.add_argument(argument)
    # The console's messages, to find what its Content-Security-Policy refused.
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module", params=SERVERS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    store, auth = request.param.split("-")
    with console_server(store, auth == "sigv4") as server:
        yield server


class Page:
    """The console in the browser, with the few moves the tests make."""

    def __init__(self, browser, server: Server) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.browser, self.server = browser, server
        self.wait = WebDriverWait(browser, SHOWN_WITHIN)

    def find(self, css: str):
        from selenium.webdriver.common.by import By

        return self.browser.find_element(By.CSS_SELECTOR, css)

    def all(self, css: str):
        from selenium.webdriver.common.by import By

        return self.browser.find_elements(By.CSS_SELECTOR, css)

    def open(self, tenant=TENANT_A, hash_: str = "") -> None:
        self.browser.get(f"{self.server.url}/dashboard")
        self.browser.execute_script("sessionStorage.clear()")
        self.browser.get(f"{self.server.url}/dashboard{hash_}")
        if self.server.auth:
            self.wait.until(lambda _: self.find("#login").is_displayed())
            self.find("#access-key").send_keys(tenant[0])
            self.find("#secret-key").send_keys(tenant[1])
            self.find("#login-form button[type=submit]").click()
            self.wait.until(lambda _: self.find("#who").text == f"account {tenant[2]}")
        self.wait.until(
            lambda _: self.browser.execute_script("return document.body.dataset.loaded")
        )

    def text(self, css: str) -> str:
        # In one call: the page may replace the element between two WebDriver calls.
        return self.browser.execute_script(
            "const node = document.querySelector(arguments[0]);"
            " return node ? node.innerText : '';", css
        )

    def click(self, css: str) -> None:
        """Click `css`, looked up again if a refresh replaced it in between."""
        from selenium.common.exceptions import StaleElementReferenceException

        def clicked(_: object) -> bool:
            try:
                self.find(css).click()
            except StaleElementReferenceException:
                return False
            return True

        self.wait.until(clicked)

    def messages(self) -> dict[str, str]:
        """Body -> the state cell's text, of the browser's rows."""
        # Read in one go: the page may replace the rows between two WebDriver calls.
        pairs = self.browser.execute_script(
            "return [...document.querySelectorAll('#messages tbody tr')].map((row) =>"
            " [row.querySelector('td.body:not(.attributes)').textContent,"
            "  row.querySelector('td.state').innerText])"
        )
        return dict(pairs)

    def refresh_messages(self) -> None:
        before = self.find("#messages").get_attribute("data-loaded")
        self.find("#messages-refresh").click()
        self.wait.until(lambda _: self.find("#messages").get_attribute("data-loaded") != before)


def test_the_console_walks_through_a_queue_and_every_action(
    browser, server: Server, tmp_path: Path
) -> None:
    sqs = server.sqs()
    dead_body = "<b>order 42 failed</b> & stays text"
    source_name, source, dlq_name, dlq = dead_letter_pair(sqs, dead=3, body=dead_body)
    sqs.send_message(QueueUrl=source, MessageBody="in flight")
    sqs.receive_message(QueueUrl=source, VisibilityTimeout=600)
    sqs.send_message(QueueUrl=source, MessageBody="waiting")
    sqs.send_message(QueueUrl=source, MessageBody="delayed", DelaySeconds=600)
    page = Page(browser, server)
    page.open()

    # The list: counts and relations, live.
    row = f'tr[data-queue="{source_name}"]'
    page.wait.until(lambda _: page.text(f"{row} td.visible") == "1")
    assert page.text(f"{row} td.in-flight") == "1" and page.text(f"{row} td.delayed") == "1"
    assert f"→ {dlq_name}" in page.text(row) and "3 dead" in page.text(row)
    assert f"dead-letter queue of {source_name}" in page.text(f'tr[data-queue="{dlq_name}"]')

    # The source's page: attributes, relations, charts from the server's history, and
    # the message browser over every state.
    page.find(f"{row} td.name a").click()
    page.wait.until(lambda _: page.text("#queue-name") == source_name)
    page.wait.until(lambda _: page.all("#messages tbody tr"))
    assert "RedrivePolicy" in page.text("#attributes")
    assert f"Dead letters go to {dlq_name} after 1 receives" in page.text("#relations")
    flow = page.find("#chart-flow svg title").get_attribute("textContent")
    # The three dead ones, and three since: the server's history.
    assert "sent 6 in the last hour" in flow
    assert page.find("#chart-depth polyline").get_attribute("points")
    assert page.messages() == {"in flight": "in flight", "waiting": "visible", "delayed": "delayed"}

    # Send, with an attribute.
    page.find("#send-body").send_keys("sent from the browser")
    page.find("#add-attribute").click()
    page.find(".attribute-name").send_keys("origin")
    page.find(".attribute-value").send_keys("console")
    page.find("#send").click()
    page.wait.until(lambda _: page.text("#send-result").startswith("sent "))
    page.wait.until(lambda _: "sent from the browser" in page.messages())
    assert "origin (String) = console" in page.text("#messages")

    # Delete one message (two clicks), the one in flight.
    delete = page.find('#messages tr[data-state="in_flight"] button.delete-message')
    delete.click()
    assert delete.text == "really delete?"
    delete.click()
    page.wait.until(lambda _: "in flight" not in page.messages())
    assert depth(sqs, source) == 3

    # Purge, confirmed.
    page.find("#purge").click()
    assert page.find("#purge-confirm").is_displayed()
    page.find("#purge-yes").click()
    page.wait.until(lambda _: page.text("#purge-result") == f"purged {source_name}")
    page.wait.until(lambda _: not page.all("#messages tbody tr"))
    assert depth(sqs, source) == 0

    # The dead-letter queue: dead messages shown as text, a slow redrive cancelled,
    # then a redrive back to the source.
    browser.get(f"{server.url}/dashboard#/queue/{server.account()}/{dlq_name}")
    page.wait.until(lambda _: page.text("#queue-name") == dlq_name)
    page.wait.until(lambda _: len(page.all("#messages tbody tr")) == 3)
    assert dead_body in page.text("#messages") and not page.all("#messages td b")
    assert f"dead (from {source_name})" in page.text("#messages")
    page.find("#redrive-rate").send_keys("1")
    page.find("#redrive-start").click()
    page.wait.until(lambda _: page.all("#tasks button.cancel-task"))
    page.click("#tasks button.cancel-task")
    page.wait.until(lambda _: page.text("#tasks td.task-status") == "CANCELLED")
    page.find("#redrive-rate").clear()
    page.find("#redrive-start").click()
    page.wait.until(lambda _: page.text("#tasks td.task-status") == "COMPLETED")
    # The second task moved all the first one (cancelled after a message or two) left.
    moved, _, total = page.text("#tasks td.progress").partition(" of ")
    assert moved == total and 1 <= int(total) <= 3
    assert depth(sqs, dlq) == 0 and depth(sqs, source) == 3

    screenshot = tmp_path / "console.png"
    assert browser.save_screenshot(str(screenshot))
    assert screenshot.read_bytes().startswith(b"\x89PNG") and screenshot.stat().st_size > 10_000
    # Everything above ran under the page's Content-Security-Policy, which refused nothing.
    refused = [entry["message"] for entry in browser.get_log("browser")
               if "Content Security Policy" in entry["message"]]
    assert refused == []


def test_the_console_lists_a_topic_with_its_subscriptions_and_publishes_to_it(
    browser, server: Server
) -> None:
    sns, sqs = server.sns(), server.sqs()
    name = unique("orders")
    topic = sns.create_topic(Name=name)["TopicArn"]
    queue_name = unique("subscriber")
    queue = sqs.create_queue(QueueName=queue_name)["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    queue_arn = queue_arn["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn,
                  Attributes={"RawMessageDelivery": "true"})
    # An email subscription waits for its confirmation; its policy's markup stays text.
    policy = '{"tag": ["<b>bold</b>"]}'
    sns.subscribe(TopicArn=topic, Protocol="email", Endpoint="ops@example.com",
                  Attributes={"FilterPolicy": policy})
    page = Page(browser, server)
    page.open()

    # The list: the topic, standard, with its two subscriptions.
    row = f'tr[data-topic="{topic}"]'
    page.wait.until(lambda _: page.text(f"{row} td.subscription-count") == "2")
    assert page.text(f"{row} td.name") == name and page.text(f"{row} td.type") == "standard"

    # The topic's page: each subscription as the server holds it.
    page.find(f"{row} td.name a").click()
    page.wait.until(lambda _: page.text("#topic-name") == name)
    page.wait.until(lambda _: len(page.all("#subscriptions tbody tr")) == 2)
    assert page.text("#topic-arn") == topic
    assert not page.find("#publish-fifo").is_displayed()
    rows = {page.text(f"#subscriptions tbody tr:nth-child({n}) td.protocol"):
            page.text(f"#subscriptions tbody tr:nth-child({n})") for n in (1, 2)}
    assert rows["sqs"].split("\t") == [
        "sqs", queue_arn, "raw", "none", "confirmed"]
    assert rows["email"].split("\t") == [
        "email", "ops@example.com", "enveloped", policy, "pending confirmation"]
    assert not page.all("#subscriptions td b")

    # Publish through the form; the subscribed queue receives it.
    page.find("#publish-message").send_keys("published from the browser")
    page.find("#publish-subject").send_keys("a subject")
    page.find("#publish").click()
    page.wait.until(lambda _: page.text("#publish-result").startswith("published "))
    message_id = page.text("#publish-result").removeprefix("published ")
    received = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5)["Messages"]
    assert [m["Body"] for m in received] == ["published from the browser"]
    assert message_id
    refused = [entry["message"] for entry in browser.get_log("browser")
               if "Content Security Policy" in entry["message"]]
    assert refused == []


def test_the_console_publishes_to_a_fifo_topic_with_a_group_and_deduplication_id(
    browser, server: Server
) -> None:
    sns, sqs = server.sns(), server.sqs()
    name = unique("ledger") + ".fifo"
    topic = sns.create_topic(Name=name, Attributes={"FifoTopic": "true"})["TopicArn"]
    queue = sqs.create_queue(QueueName=unique("books") + ".fifo",
                             Attributes={"FifoQueue": "true"})["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    sns.subscribe(TopicArn=topic, Protocol="sqs",
                  Endpoint=queue_arn["Attributes"]["QueueArn"],
                  Attributes={"RawMessageDelivery": "true"})
    page = Page(browser, server)
    page.open()
    row = f'tr[data-topic="{topic}"]'
    page.wait.until(lambda _: page.text(f"{row} td.type") == "FIFO")
    page.find(f"{row} td.name a").click()
    page.wait.until(lambda _: page.find("#publish-fifo").is_displayed())

    for _ in range(2):  # the second is a duplicate, which SNS answers as a publish
        page.find("#publish-message").clear()
        page.find("#publish-message").send_keys("entry 1")
        page.find("#publish-group").clear()
        page.find("#publish-group").send_keys("account-7")
        page.find("#publish-dedup").clear()
        page.find("#publish-dedup").send_keys("entry-1")
        page.browser.execute_script("document.getElementById('publish-result').textContent = ''")
        page.find("#publish").click()
        page.wait.until(lambda _: page.text("#publish-result").startswith("published "))

    received = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5, MaxNumberOfMessages=10,
                                   AttributeNames=["MessageGroupId"])["Messages"]
    assert [(m["Body"], m["Attributes"]["MessageGroupId"]) for m in received] == [
        ("entry 1", "account-7")]


@pytest.mark.parametrize("server", [s for s in SERVERS if s.endswith("sigv4")], indirect=True)
def test_with_auth_a_tenant_page_shows_nothing_of_another_tenant(browser, server: Server) -> None:
    theirs = server.sqs(TENANT_B)
    secret_name = unique("tenant-b")
    secret_url = theirs.create_queue(QueueName=secret_name)["QueueUrl"]
    theirs.send_message(QueueUrl=secret_url, MessageBody="b's own secret")
    their_topic = server.sns(TENANT_B).create_topic(Name=secret_name)["TopicArn"]
    mine = unique("tenant-a")
    server.sqs(TENANT_A).create_queue(QueueName=mine)
    my_topic = server.sns(TENANT_A).create_topic(Name=mine)["TopicArn"]
    page = Page(browser, server)
    page.open(TENANT_A)
    page.wait.until(lambda _: page.all(f'tr[data-queue="{mine}"]'))
    page.wait.until(lambda _: page.all(f'tr[data-topic="{my_topic}"]'))
    assert secret_name not in page.text("#queues") and secret_name not in page.text("#topics")
    # B's topic page, asked for by ARN: "does not exist" too.
    browser.get(f"{server.url}/dashboard#/topic/{quote(their_topic, safe='')}")
    page.wait.until(lambda _: "does not exist" in page.text("#status"))
    assert not page.all("#subscriptions tbody tr") and page.text("#topic-name") == ""
    # B's queue page, asked for by name: nothing but "does not exist".
    browser.get(f"{server.url}/dashboard#/queue/{TENANT_B[2]}/{secret_name}")
    page.wait.until(lambda _: "does not exist" in page.text("#status"))
    assert "b's own secret" not in browser.page_source
    assert not page.all("#messages tbody tr")
    # Signed out, the page asks again and shows nothing.
    page.find("#sign-out").click()
    assert page.find("#login").is_displayed() and not page.find("#list").is_displayed()
    assert httpx.get(f"{server.url}/dashboard/api/queues").status_code == 401
    assert depth(theirs, secret_url) == 1


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

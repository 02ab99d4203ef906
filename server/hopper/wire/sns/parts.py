"""What SNS handlers act through: the topic service and the deliveries."""

from __future__ import annotations

from dataclasses import dataclass

from hopper.sns.deliveries import Deliveries
from hopper.sns.service import TopicService


@dataclass(frozen=True)
class Sns:
    topics: TopicService
    deliveries: Deliveries

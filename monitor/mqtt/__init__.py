"""The MQTT side of tally: topic names, the event feed (with its disk outbox), control messages."""

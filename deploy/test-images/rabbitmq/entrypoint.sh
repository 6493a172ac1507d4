#!/bin/bash
# The broker in the foreground as the rabbitmq user, its default account from the environment (created by
# the broker on its first start, when its database is empty), reachable from other containers.
set -euo pipefail
mkdir -p /etc/rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
cat > /etc/rabbitmq/rabbitmq.conf <<CONF
default_user = ${RABBITMQ_DEFAULT_USER:-guest}
default_pass = ${RABBITMQ_DEFAULT_PASS:-guest}
loopback_users = none
listeners.tcp.default = 5672
management.tcp.port = 15672
log.console = true
log.file = false
CONF
# The node's name stays the same across restarts of the container, whose host name changes: its
# database is found again.
echo "NODENAME=rabbit@localhost" > /etc/rabbitmq/rabbitmq-env.conf
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq /etc/rabbitmq
exec su rabbitmq -s /bin/sh -c "exec rabbitmq-server"

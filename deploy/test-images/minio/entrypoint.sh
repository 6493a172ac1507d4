#!/bin/sh
# moto's S3 server on 9000; MinIO's arguments (`server /data --console-address :9001`) are dropped.
exec /opt/moto/bin/moto_server -H 0.0.0.0 -p 9000

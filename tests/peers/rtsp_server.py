"""A real RTSP server on loopback for framefeed's tests and benchmarks: GStreamer's RTSP server (Debian's
gir1.2-gst-rtsp-server-1.0, python3-gi, gstreamer1.0-plugins-good) serving an H.264 MP4 at real-time pace at
rtsp://127.0.0.1:PORT/clip, each client from the start. Prints "port N" once listening.

Usage: python3 rtsp_server.py CLIP.mp4
"""

import sys

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def main() -> None:
    Gst.init(None)
    server = GstRtspServer.RTSPServer()
    server.set_address("127.0.0.1")
    server.set_service("0")
    factory = GstRtspServer.RTSPMediaFactory()
    # The file's H.264 as it is (no re-encoding), parameter sets with every keyframe.
    factory.set_launch(
        f"( filesrc location={sys.argv[1]} ! qtdemux ! rtph264pay name=pay0 pt=96 config-interval=-1 )"
    )
    factory.set_shared(False)
    server.get_mount_points().add_factory("/clip", factory)
    server.attach(None)
    print("port", server.get_bound_port(), flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()

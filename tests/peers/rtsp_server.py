"""A real RTSP server on loopback for framefeed's tests and benchmarks: GStreamer's RTSP server (Debian's
gir1.2-gst-rtsp-server-1.0, python3-gi, gstreamer1.0-plugins-good) serving an H.264 MP4 at real-time pace at
rtsp://127.0.0.1:PORT/clip, each client from the start. Prints "port N" once listening.

The end of the clip reaches the client 2 s after its last frame. Over UDP the server's RTCP BYE ends the stream
for FFmpeg, and FFmpeg's RTP reader takes RTCP before RTP when both wait (libavformat/rtpproto.c): a client that
a loaded machine keeps a frame behind would see the BYE ahead of the last frame's packets and drop them. A
camera never ends its stream, so the tests hold the BYE back rather than count on the race.

Usage: python3 rtsp_server.py CLIP.mp4
"""

import sys
import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstRtspServer", "1.0")
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402


def hold_back_the_end(_factory: GstRtspServer.RTSPMediaFactory, media: GstRtspServer.RTSPMedia) -> None:
    """Delays the payloader's end of stream, which the session turns into an RTCP BYE, by 2 s."""

    def probe(_pad: Gst.Pad, info: Gst.PadProbeInfo) -> Gst.PadProbeReturn:
        event = info.get_event()
        if event is not None and event.type == Gst.EventType.EOS:
            time.sleep(2)  # the streaming thread of this client's media, which has nothing left to send
        return Gst.PadProbeReturn.OK

    pay = media.get_element().get_by_name("pay0")
    pay.get_static_pad("src").add_probe(Gst.PadProbeType.EVENT_DOWNSTREAM, probe)


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
    factory.connect("media-configure", hold_back_the_end)
    server.get_mount_points().add_factory("/clip", factory)
    server.attach(None)
    print("port", server.get_bound_port(), flush=True)
    GLib.MainLoop().run()


if __name__ == "__main__":
    main()

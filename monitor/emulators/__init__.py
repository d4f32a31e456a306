"""Stand-ins for applications that cannot run on this machine (vMix is Windows-only and licensed).

An emulator speaks the application's documented wire protocol on 127.0.0.1 and follows a scripted
timeline, so observers and scorers can be tested end to end against known truth.
"""

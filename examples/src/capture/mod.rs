//! Reading packet captures: pcap/pcapng records, link layers, IPv4/IPv6 down to the TCP segment.

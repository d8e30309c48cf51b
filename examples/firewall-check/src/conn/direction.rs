//! The two ways a segment travels and the two ends that send them.

/// Which way a segment travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From the client (SYN sender) to the server.
    ClientToServer,
    /// From the server to the client.
    ServerToClient,
}

impl Direction {
    /// The other direction.
    pub fn reverse(self) -> Self {
        match self {
            Direction::ClientToServer => Direction::ServerToClient,
            Direction::ServerToClient => Direction::ClientToServer,
        }
    }

    /// The endpoint that sends this direction's data: `client` or `server`.
    pub fn sender(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client",
            Direction::ServerToClient => "server",
        }
    }

    /// `client-to-server` or `server-to-client`, the names used in text.
    pub fn hyphenated(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client-to-server",
            Direction::ServerToClient => "server-to-client",
        }
    }

    /// `client_to_server` or `server_to_client`, the names used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::ClientToServer => "client_to_server",
            Direction::ServerToClient => "server_to_client",
        }
    }
}

/// One end of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// The SYN sender.
    Client,
    /// The other end.
    Server,
}

impl Endpoint {
    /// The other end.
    pub fn peer(self) -> Self {
        match self {
            Endpoint::Client => Endpoint::Server,
            Endpoint::Server => Endpoint::Client,
        }
    }

    /// `client` or `server`, the names used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Client => "client",
            Endpoint::Server => "server",
        }
    }

    /// The direction this end sends.
    pub fn sends(self) -> Direction {
        match self {
            Endpoint::Client => Direction::ClientToServer,
            Endpoint::Server => Direction::ServerToClient,
        }
    }
}

impl Direction {
    /// The end that sends this direction's data.
    pub fn sending(self) -> Endpoint {
        match self {
            Direction::ClientToServer => Endpoint::Client,
            Direction::ServerToClient => Endpoint::Server,
        }
    }

    /// The end that receives this direction's data (and advertises the
    /// window the sender reads).
    pub fn receiving(self) -> Endpoint {
        self.sending().peer()
    }

    /// 0 for client to server, 1 for server to client: the index of the
    /// direction in per-direction arrays.
    pub fn index(self) -> usize {
        usize::from(self == Direction::ServerToClient)
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

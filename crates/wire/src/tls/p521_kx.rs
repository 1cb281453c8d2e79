//! ECDHE on P-521 (`secp521r1`), which OpenSSL offers and ring does not: in TLS 1.2
//! an OpenSSL server only presents an ECDSA P-521 certificate to a client that lists
//! the curve among its groups. Offered last, so that the key share sent up front stays
//! the provider's first group.

use p521::elliptic_curve::sec1::ToEncodedPoint;
use ring::rand::{SecureRandom, SystemRandom};
use rustls::crypto::{ActiveKeyExchange, SharedSecret, SupportedKxGroup};
use rustls::{Error, NamedGroup, PeerMisbehaved};

/// The `secp521r1` group.
#[derive(Debug)]
pub(crate) struct P521Group;

/// An ephemeral P-521 key and its public point (uncompressed SEC1).
struct P521Exchange {
    secret: p521::SecretKey,
    public: Vec<u8>,
}

impl SupportedKxGroup for P521Group {
    fn start(&self) -> Result<Box<dyn ActiveKeyExchange>, Error> {
        let rng = SystemRandom::new();
        // Uniform below the group order: 521 random bits, retried when too large.
        let secret = loop {
            let mut bytes = [0u8; 66];
            rng.fill(&mut bytes)
                .map_err(|_| Error::General("no randomness for P-521".to_string()))?;
            bytes[0] &= 0x01;
            if let Ok(key) = p521::SecretKey::from_slice(&bytes) {
                break key;
            }
        };
        let public = secret
            .public_key()
            .to_encoded_point(false)
            .as_bytes()
            .to_vec();
        Ok(Box::new(P521Exchange { secret, public }))
    }

    fn name(&self) -> NamedGroup {
        NamedGroup::secp521r1
    }
}

impl ActiveKeyExchange for P521Exchange {
    fn complete(self: Box<Self>, peer_pub_key: &[u8]) -> Result<SharedSecret, Error> {
        let peer = p521::PublicKey::from_sec1_bytes(peer_pub_key)
            .map_err(|_| Error::PeerMisbehaved(PeerMisbehaved::InvalidKeyShare))?;
        let shared = p521::ecdh::diffie_hellman(self.secret.to_nonzero_scalar(), peer.as_affine());
        Ok(SharedSecret::from(shared.raw_secret_bytes().as_slice()))
    }

    fn pub_key(&self) -> &[u8] {
        &self.public
    }

    fn group(&self) -> NamedGroup {
        NamedGroup::secp521r1
    }
}

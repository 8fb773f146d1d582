"""The embedded devnet: anvil with the reference registries and a scripted history."""

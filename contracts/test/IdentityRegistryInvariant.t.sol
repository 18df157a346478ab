// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test, Common} from "./lib/Test.sol";
import {IdentityRegistry} from "../src/IdentityRegistry.sol";

/// @notice The signing cheatcode the handler needs beyond the shared base.
interface VmSigner {
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
}

/// @notice Random registrations, transfers (plain and by operators), approvals and agent
/// wallets set with the wallet's signature, by three accounts, with a model of owners and
/// wallets. Refused calls revert the handler call (forge counts them).
contract IdentityHandler is Common {
    VmSigner internal constant signer = VmSigner(address(uint160(uint256(keccak256("hevm cheat code")))));
    IdentityRegistry public immutable registry;
    uint256[3] internal keys = [uint256(0xA1), uint256(0xA2), uint256(0xA3)];
    address[3] public accounts;
    uint256 public minted;
    mapping(uint256 agentId => address) public ownerOf;
    mapping(uint256 agentId => address) public walletOf;

    constructor() {
        registry = new IdentityRegistry();
        for (uint256 i; i < 3; ++i) {
            accounts[i] = vm.addr(keys[i]);
        }
    }

    function register(uint256 a) external {
        address who = accounts[a % 3];
        vm.prank(who);
        uint256 id = registry.register("ipfs://x");
        ownerOf[id] = who;
        walletOf[id] = who;
        minted += 1;
    }

    function transfer(uint256 id, uint256 to, bool asOperator) external {
        if (minted == 0) return;
        id = bound(id, 0, minted - 1);
        address from = ownerOf[id];
        address dest = accounts[to % 3];
        address caller = from;
        if (asOperator) {
            caller = accounts[(to + 1) % 3];
            vm.prank(from);
            registry.setApprovalForAll(caller, true);
        }
        vm.prank(caller);
        registry.transferFrom(from, dest, id);
        ownerOf[id] = dest;
        walletOf[id] = address(0);
    }

    function setWallet(uint256 id, uint256 w) external {
        if (minted == 0) return;
        id = bound(id, 0, minted - 1);
        uint256 key = keys[w % 3];
        address wallet = vm.addr(key);
        address owner = ownerOf[id];
        uint256 deadline = block.timestamp + 60;
        bytes32 structHash = keccak256(abi.encode(registry.AGENT_WALLET_SET_TYPEHASH(), id, wallet, owner, deadline));
        (uint8 v, bytes32 r, bytes32 s) =
            signer.sign(key, keccak256(abi.encodePacked("\x19\x01", registry.domainSeparator(), structHash)));
        vm.prank(owner);
        registry.setAgentWallet(id, wallet, deadline, abi.encodePacked(r, s, v));
        walletOf[id] = wallet;
    }

    function account(uint256 i) external view returns (address) {
        return accounts[i];
    }
}

contract IdentityRegistryInvariantTest is Test {
    IdentityHandler internal h;

    function setUp() public {
        vm.warp(1_700_000_000);
        h = new IdentityHandler();
        targetContract(address(h));
    }

    /// Owners and agent wallets are the model's; balances add up to what was minted.
    function invariant_ownersWalletsAndBalances() public view {
        IdentityRegistry registry = h.registry();
        uint256 n = h.minted();
        for (uint256 id; id < n; ++id) {
            vm.assertEq(registry.ownerOf(id), h.ownerOf(id), "owner");
            vm.assertEq(registry.getAgentWallet(id), h.walletOf(id), "agent wallet");
        }
        uint256 sum;
        for (uint256 i; i < 3; ++i) {
            sum += registry.balanceOf(h.account(i));
        }
        vm.assertEq(sum, n, "balances");
    }
}

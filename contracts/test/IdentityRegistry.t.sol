// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {ERC721, IERC721Receiver} from "../src/ERC721.sol";
import {IdentityRegistry, IERC1271} from "../src/IdentityRegistry.sol";
import {IIdentityRegistry} from "../src/IIdentityRegistry.sol";

/// @notice The signing cheatcodes these tests need beyond the shared base.
interface VmSign {
    function sign(uint256 privateKey, bytes32 digest) external pure returns (uint8 v, bytes32 r, bytes32 s);
}

/// @notice A contract wallet that accepts the digests its owner approved (ERC-1271).
contract MockContractWallet is IERC1271 {
    mapping(bytes32 => bool) public approved;

    function approve(bytes32 digest) external {
        approved[digest] = true;
    }

    function isValidSignature(bytes32 hash, bytes calldata) external view returns (bytes4) {
        return approved[hash] ? IERC1271.isValidSignature.selector : bytes4(0xffffffff);
    }
}

/// @notice A contract wallet that answers with a megabyte of junk.
contract JunkWallet {
    fallback() external {
        assembly {
            return(0, 1000000)
        }
    }
}

/// @notice A contract that accepts ERC-721 tokens and registers agents.
contract GoodReceiver is IERC721Receiver {
    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        return IERC721Receiver.onERC721Received.selector;
    }

    function registerAt(IdentityRegistry r) external returns (uint256) {
        return r.register("ipfs://x");
    }
}

/// @notice A contract that has no onERC721Received.
contract NoReceiver {
    function registerAt(IdentityRegistry r) external returns (uint256) {
        return r.register();
    }
}

/// @notice A contract whose onERC721Received reverts with a reason.
contract RevertingReceiver is IERC721Receiver {
    error Nope();

    function onERC721Received(address, address, uint256, bytes calldata) external pure returns (bytes4) {
        revert Nope();
    }

    function registerAt(IdentityRegistry r) external returns (uint256) {
        return r.register();
    }
}

contract IdentityRegistryTest is Test {
    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);
    event ApprovalForAll(address indexed owner, address indexed operator, bool approved);
    event Registered(uint256 indexed agentId, string agentURI, address indexed owner);
    event MetadataSet(
        uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue
    );
    event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy);
    event MetadataUpdate(uint256 _tokenId);

    VmSign internal constant signer = VmSign(address(uint160(uint256(keccak256("hevm cheat code")))));
    uint256 internal constant WALLET_KEY = 0xA11CE;
    uint256 internal constant HALF_N = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;
    uint256 internal constant N = 0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEBAAEDCE6AF48A03BBFD25E8CD0364141;

    IdentityRegistry internal registry;
    address internal owner = makeAddr("owner");
    address internal operator = makeAddr("operator");
    address internal approvedAddr = makeAddr("approved");
    address internal stranger = makeAddr("stranger");
    address internal buyer = makeAddr("buyer");
    address internal wallet;

    function setUp() public {
        vm.warp(1_700_000_000);
        registry = new IdentityRegistry();
        wallet = vm.addr(WALLET_KEY);
    }

    function _register() internal returns (uint256 id) {
        vm.prank(owner);
        id = registry.register("https://node.example/v1/erc8004/registration/did:key:z6Mk");
    }

    function _digest(uint256 agentId, address newWallet, address agentOwner, uint256 deadline)
        internal
        view
        returns (bytes32)
    {
        bytes32 structHash =
            keccak256(abi.encode(registry.AGENT_WALLET_SET_TYPEHASH(), agentId, newWallet, agentOwner, deadline));
        return keccak256(abi.encodePacked("\x19\x01", registry.domainSeparator(), structHash));
    }

    function _sign(uint256 key, bytes32 digest) internal pure returns (bytes memory) {
        (uint8 v, bytes32 r, bytes32 s) = signer.sign(key, digest);
        return abi.encodePacked(r, s, v);
    }

    function _notAuthorized(address who, uint256 id) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IIdentityRegistry.NotAuthorized.selector, who, id);
    }

    // --- register ---

    function test_register_countsIdsFromZeroAndSetsTheWallet() public {
        vm.prank(owner);
        vm.assertEq(registry.register(), 0, "first id");
        vm.prank(owner);
        vm.assertEq(registry.register("ipfs://b"), 1, "second id");
        vm.assertEq(registry.ownerOf(1), owner, "owner");
        vm.assertEq(registry.balanceOf(owner), 2, "balance");
        vm.assertEq(keccak256(bytes(registry.tokenURI(0))), keccak256(""), "no uri");
        vm.assertEq(keccak256(bytes(registry.tokenURI(1))), keccak256("ipfs://b"), "uri");
        vm.assertEq(registry.getAgentWallet(1), owner, "wallet is the owner");
        vm.assertEq(keccak256(registry.getMetadata(1, "agentWallet")), keccak256(abi.encodePacked(owner)), "wallet key");
    }

    function test_register_emitsTransferRegisteredAndWallet() public {
        vm.expectEmit(true, true, true, true, address(registry));
        emit Transfer(address(0), owner, 0);
        vm.expectEmit(true, true, true, true, address(registry));
        emit Registered(0, "ipfs://a", owner);
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(0, "agentWallet", "agentWallet", abi.encodePacked(owner));
        vm.prank(owner);
        registry.register("ipfs://a");
    }

    function test_register_withMetadata() public {
        IIdentityRegistry.MetadataEntry[] memory md = new IIdentityRegistry.MetadataEntry[](2);
        md[0] = IIdentityRegistry.MetadataEntry("did", bytes("did:key:z6Mk"));
        md[1] = IIdentityRegistry.MetadataEntry("a2a", bytes("https://a/card"));
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(0, "agentWallet", "agentWallet", abi.encodePacked(owner));
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(0, "did", "did", bytes("did:key:z6Mk"));
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(0, "a2a", "a2a", bytes("https://a/card"));
        vm.prank(owner);
        uint256 id = registry.register("ipfs://a", md);
        vm.assertEq(keccak256(registry.getMetadata(id, "did")), keccak256("did:key:z6Mk"), "did");
    }

    function test_register_reservedKey() public {
        IIdentityRegistry.MetadataEntry[] memory md = new IIdentityRegistry.MetadataEntry[](1);
        md[0] = IIdentityRegistry.MetadataEntry("agentWallet", abi.encodePacked(stranger));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.ReservedMetadataKey.selector, "agentWallet"));
        registry.register("ipfs://a", md);
    }

    function test_register_contractReceiver() public {
        GoodReceiver r = new GoodReceiver();
        uint256 id = r.registerAt(registry);
        vm.assertEq(registry.ownerOf(id), address(r), "owner");
    }

    function test_register_revertsForANonReceiver() public {
        NoReceiver r = new NoReceiver();
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InvalidReceiver.selector, address(r)));
        r.registerAt(registry);
    }

    function test_register_passesTheReceiversReason() public {
        RevertingReceiver r = new RevertingReceiver();
        vm.expectRevert(RevertingReceiver.Nope.selector);
        r.registerAt(registry);
    }

    // --- setAgentURI ---

    function test_setAgentURI_byOwnerOperatorAndApproved() public {
        uint256 id = _register();
        vm.expectEmit(true, true, true, true, address(registry));
        emit URIUpdated(id, "ipfs://new", owner);
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataUpdate(id);
        vm.prank(owner);
        registry.setAgentURI(id, "ipfs://new");
        vm.assertEq(keccak256(bytes(registry.tokenURI(id))), keccak256("ipfs://new"), "uri");

        vm.prank(owner);
        registry.setApprovalForAll(operator, true);
        vm.prank(operator);
        registry.setAgentURI(id, "ipfs://op");
        vm.prank(owner);
        registry.approve(approvedAddr, id);
        vm.prank(approvedAddr);
        registry.setAgentURI(id, "ipfs://ap");
        vm.assertEq(keccak256(bytes(registry.tokenURI(id))), keccak256("ipfs://ap"), "uri");
    }

    function test_setAgentURI_stranger() public {
        uint256 id = _register();
        vm.prank(stranger);
        vm.expectRevert(_notAuthorized(stranger, id));
        registry.setAgentURI(id, "ipfs://evil");
    }

    function test_setAgentURI_nonexistent() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 7));
        registry.setAgentURI(7, "ipfs://x");
    }

    function test_tokenURI_nonexistent() public {
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 0));
        registry.tokenURI(0);
    }

    // --- metadata ---

    function test_setMetadata_setsAndEmits() public {
        uint256 id = _register();
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(id, "did", "did", bytes("did:key:z6Mk"));
        vm.prank(owner);
        registry.setMetadata(id, "did", bytes("did:key:z6Mk"));
        vm.assertEq(keccak256(registry.getMetadata(id, "did")), keccak256("did:key:z6Mk"), "value");
        vm.assertEq(registry.getMetadata(id, "other").length, 0, "unset key");
    }

    function test_setMetadata_reservedKey() public {
        uint256 id = _register();
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.ReservedMetadataKey.selector, "agentWallet"));
        registry.setMetadata(id, "agentWallet", abi.encodePacked(stranger));
    }

    function test_setMetadata_stranger() public {
        uint256 id = _register();
        vm.prank(stranger);
        vm.expectRevert(_notAuthorized(stranger, id));
        registry.setMetadata(id, "did", "x");
    }

    function test_setMetadata_nonexistent() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 3));
        registry.setMetadata(3, "did", "x");
    }

    // --- agent wallet ---

    function test_setAgentWallet_withTheWalletsSignature() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(id, "agentWallet", "agentWallet", abi.encodePacked(wallet));
        vm.prank(owner);
        registry.setAgentWallet(id, wallet, deadline, sig);
        vm.assertEq(registry.getAgentWallet(id), wallet, "wallet");
        vm.assertEq(keccak256(registry.getMetadata(id, "agentWallet")), keccak256(abi.encodePacked(wallet)), "key");
    }

    function test_setAgentWallet_compactSignature() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp;
        (uint8 v, bytes32 r, bytes32 s) = signer.sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        bytes32 vs = bytes32(uint256(s) | (uint256(v - 27) << 255));
        vm.prank(owner);
        registry.setAgentWallet(id, wallet, deadline, abi.encodePacked(r, vs));
        vm.assertEq(registry.getAgentWallet(id), wallet, "wallet");
    }

    function test_setAgentWallet_otherKeysSignature() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _sign(0xB0B, _digest(id, wallet, owner, deadline));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, wallet));
        registry.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_setAgentWallet_signatureForAnotherAgent() public {
        uint256 id = _register();
        uint256 other = _register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _sign(WALLET_KEY, _digest(other, wallet, owner, deadline));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, wallet));
        registry.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_setAgentWallet_malleableHighS() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 60;
        (uint8 v, bytes32 r, bytes32 s) = signer.sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        bytes32 highS = bytes32(N - uint256(s));
        vm.assertGt(uint256(highS), HALF_N, "high s");
        uint8 flipped = v == 27 ? 28 : 27;
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, wallet));
        registry.setAgentWallet(id, wallet, deadline, abi.encodePacked(r, highS, flipped));
    }

    function test_setAgentWallet_badLengthAndV() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 60;
        (uint8 v, bytes32 r, bytes32 s) = signer.sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        vm.startPrank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, wallet));
        registry.setAgentWallet(id, wallet, deadline, abi.encodePacked(r, s, v, uint8(0)));
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, wallet));
        registry.setAgentWallet(id, wallet, deadline, abi.encodePacked(r, s, v - 27));
        vm.stopPrank();
    }

    function test_setAgentWallet_expired() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp - 1;
        bytes memory sig = _sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.SignatureExpired.selector, deadline));
        registry.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_setAgentWallet_deadlineTooFar() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 5 minutes + 1;
        bytes memory sig = _sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.DeadlineTooFar.selector, deadline));
        registry.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_setAgentWallet_zeroWallet() public {
        uint256 id = _register();
        vm.prank(owner);
        vm.expectRevert(IIdentityRegistry.ZeroWallet.selector);
        registry.setAgentWallet(id, address(0), block.timestamp, "");
    }

    function test_setAgentWallet_stranger() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        vm.prank(stranger);
        vm.expectRevert(_notAuthorized(stranger, id));
        registry.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_setAgentWallet_erc1271() public {
        uint256 id = _register();
        MockContractWallet cw = new MockContractWallet();
        uint256 deadline = block.timestamp + 60;
        bytes32 digest = _digest(id, address(cw), owner, deadline);
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, address(cw)));
        registry.setAgentWallet(id, address(cw), deadline, "anything");
        cw.approve(digest);
        vm.prank(owner);
        registry.setAgentWallet(id, address(cw), deadline, "anything");
        vm.assertEq(registry.getAgentWallet(id), address(cw), "contract wallet");
    }

    function test_setAgentWallet_junkAnswer() public {
        uint256 id = _register();
        JunkWallet junk = new JunkWallet();
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, address(junk)));
        registry.setAgentWallet(id, address(junk), block.timestamp, "x");
    }

    /// A signature the wallet gave the previous owner does not work for the next one.
    function test_setAgentWallet_signatureBoundToTheOwner() public {
        uint256 id = _register();
        uint256 deadline = block.timestamp + 60;
        bytes memory sig = _sign(WALLET_KEY, _digest(id, wallet, owner, deadline));
        vm.prank(owner);
        registry.transferFrom(owner, buyer, id);
        vm.prank(buyer);
        vm.expectRevert(abi.encodeWithSelector(IIdentityRegistry.InvalidWalletSignature.selector, wallet));
        registry.setAgentWallet(id, wallet, deadline, sig);
    }

    function test_unsetAgentWallet() public {
        uint256 id = _register();
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(id, "agentWallet", "agentWallet", "");
        vm.prank(owner);
        registry.unsetAgentWallet(id);
        vm.assertEq(registry.getAgentWallet(id), address(0), "cleared");
        vm.assertEq(registry.getMetadata(id, "agentWallet").length, 0, "key cleared");
    }

    function test_unsetAgentWallet_stranger() public {
        uint256 id = _register();
        vm.prank(stranger);
        vm.expectRevert(_notAuthorized(stranger, id));
        registry.unsetAgentWallet(id);
    }

    function test_transfer_clearsTheWallet() public {
        uint256 id = _register();
        vm.expectEmit(true, true, true, true, address(registry));
        emit MetadataSet(id, "agentWallet", "agentWallet", "");
        vm.expectEmit(true, true, true, true, address(registry));
        emit Transfer(owner, buyer, id);
        vm.prank(owner);
        registry.safeTransferFrom(owner, buyer, id);
        vm.assertEq(registry.getAgentWallet(id), address(0), "cleared");
        vm.assertEq(registry.ownerOf(id), buyer, "new owner");
    }

    // --- ERC-721 ---

    function test_approve_andTransferByApproved() public {
        uint256 id = _register();
        vm.expectEmit(true, true, true, true, address(registry));
        emit Approval(owner, approvedAddr, id);
        vm.prank(owner);
        registry.approve(approvedAddr, id);
        vm.assertEq(registry.getApproved(id), approvedAddr, "approved");
        vm.prank(approvedAddr);
        registry.transferFrom(owner, buyer, id);
        vm.assertEq(registry.getApproved(id), address(0), "approval cleared");
        vm.assertEq(registry.balanceOf(owner), 0, "from balance");
        vm.assertEq(registry.balanceOf(buyer), 1, "to balance");
    }

    function test_approve_stranger() public {
        uint256 id = _register();
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InvalidApprover.selector, stranger));
        registry.approve(stranger, id);
    }

    function test_approve_byOperator() public {
        uint256 id = _register();
        vm.prank(owner);
        registry.setApprovalForAll(operator, true);
        vm.prank(operator);
        registry.approve(approvedAddr, id);
        vm.assertEq(registry.getApproved(id), approvedAddr, "approved");
    }

    function test_setApprovalForAll_zeroOperator() public {
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InvalidOperator.selector, address(0)));
        registry.setApprovalForAll(address(0), true);
    }

    function test_setApprovalForAll_emits() public {
        vm.expectEmit(true, true, true, true, address(registry));
        emit ApprovalForAll(owner, operator, true);
        vm.prank(owner);
        registry.setApprovalForAll(operator, true);
        vm.assertTrue(registry.isApprovedForAll(owner, operator), "operator");
    }

    function test_transferFrom_wrongFrom() public {
        uint256 id = _register();
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721IncorrectOwner.selector, stranger, id, owner));
        registry.transferFrom(stranger, buyer, id);
    }

    function test_transferFrom_stranger() public {
        uint256 id = _register();
        vm.prank(stranger);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InsufficientApproval.selector, stranger, id));
        registry.transferFrom(owner, stranger, id);
    }

    function test_transferFrom_toZero() public {
        uint256 id = _register();
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InvalidReceiver.selector, address(0)));
        registry.transferFrom(owner, address(0), id);
    }

    function test_safeTransferFrom_nonReceiver() public {
        uint256 id = _register();
        NoReceiver r = new NoReceiver();
        vm.prank(owner);
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InvalidReceiver.selector, address(r)));
        registry.safeTransferFrom(owner, address(r), id, "");
    }

    function test_balanceOf_zero() public {
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721InvalidOwner.selector, address(0)));
        registry.balanceOf(address(0));
    }

    function test_getApproved_nonexistent() public {
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 5));
        registry.getApproved(5);
    }

    function test_supportsInterface() public view {
        vm.assertTrue(registry.supportsInterface(0x01ffc9a7), "165");
        vm.assertTrue(registry.supportsInterface(0x80ac58cd), "721");
        vm.assertTrue(registry.supportsInterface(0x5b5e139f), "721 metadata");
        vm.assertTrue(registry.supportsInterface(0x49064906), "4906");
        vm.assertFalse(registry.supportsInterface(0xffffffff), "none");
    }

    function test_nameAndSymbol() public view {
        vm.assertEq(keccak256(bytes(registry.name())), keccak256("AgentIdentity"), "name");
        vm.assertEq(keccak256(bytes(registry.symbol())), keccak256("AGENT"), "symbol");
    }

    function test_isAuthorizedOrOwner() public {
        uint256 id = _register();
        vm.prank(owner);
        registry.setApprovalForAll(operator, true);
        vm.assertTrue(registry.isAuthorizedOrOwner(owner, id), "owner");
        vm.assertTrue(registry.isAuthorizedOrOwner(operator, id), "operator");
        vm.assertFalse(registry.isAuthorizedOrOwner(stranger, id), "stranger");
        vm.expectRevert(abi.encodeWithSelector(ERC721.ERC721NonexistentToken.selector, 9));
        registry.isAuthorizedOrOwner(owner, 9);
    }

    function test_eip712Domain() public view {
        (bytes1 fields, string memory n, string memory v, uint256 chainId, address verifying,,) =
            registry.eip712Domain();
        vm.assertEq(uint256(uint8(fields)), 0x0f, "fields");
        bytes32 expected = keccak256(
            abi.encode(
                keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)"),
                keccak256(bytes(n)),
                keccak256(bytes(v)),
                chainId,
                verifying
            )
        );
        vm.assertEq(registry.domainSeparator(), expected, "separator");
        vm.assertEq(keccak256(bytes(n)), keccak256("ERC8004IdentityRegistry"), "name");
    }

    function testFuzz_register_idsAreSequential(uint8 n) public {
        for (uint256 i; i < n; ++i) {
            vm.prank(owner);
            vm.assertEq(registry.register(), i, "id");
        }
        vm.assertEq(registry.balanceOf(owner), n, "balance");
    }
}
